CREATE TABLE `node_pools` (
	`name` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
