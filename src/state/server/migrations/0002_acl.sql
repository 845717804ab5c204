CREATE TABLE `acl_policies` (
	`name` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `acl_tokens` (
	`accessor_id` text PRIMARY KEY NOT NULL,
	`secret_hash` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX `acl_tokens_secret_hash_unique` ON `acl_tokens` (`secret_hash`);