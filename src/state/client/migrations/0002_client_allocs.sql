CREATE TABLE `allocations` (
	`id` text PRIMARY KEY NOT NULL,
	`alloc` text NOT NULL,
	`local` text
);
--> statement-breakpoint
CREATE TABLE `task_runner_states` (
	`alloc_id` text NOT NULL,
	`task_name` text NOT NULL,
	`state` text,
	`local` text,
	PRIMARY KEY(`alloc_id`, `task_name`)
);
