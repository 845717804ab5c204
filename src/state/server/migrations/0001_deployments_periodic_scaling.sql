CREATE TABLE `deployments` (
	`id` text PRIMARY KEY NOT NULL,
	`job_id` text NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `periodic_launches` (
	`job_id` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
--> statement-breakpoint
CREATE TABLE `scaling_events` (
	`job_id` text PRIMARY KEY NOT NULL,
	`body` text NOT NULL
);
