CREATE TABLE `namespaces` (
	`name` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
