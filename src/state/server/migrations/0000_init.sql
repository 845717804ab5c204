CREATE TABLE `allocations` (
	`id` text PRIMARY KEY NOT NULL,
	`node_id` text NOT NULL,
	`job_id` text NOT NULL,
	`job_version_key` integer NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `evaluations` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`status` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `job_versions` (
	`job_modify_index` integer PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`version` integer NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `jobs` (
	`id` text PRIMARY KEY NOT NULL,
	`job_modify_index` integer NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `nodes` (
	`id` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `server_meta` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL
);
