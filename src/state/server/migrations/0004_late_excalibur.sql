CREATE TABLE `variables` (
	`namespace` text NOT NULL,
	`path` text NOT NULL,
	`key_id` text NOT NULL,
	`data` text NOT NULL,
	`body` text NOT NULL,
	PRIMARY KEY(`namespace`, `path`)
);
