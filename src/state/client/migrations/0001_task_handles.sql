CREATE TABLE `task_handles` (
	`alloc_id` text NOT NULL,
	`task_name` text NOT NULL,
	`driver` text NOT NULL,
	`handle` text NOT NULL,
	`updated_at` integer NOT NULL,
	PRIMARY KEY(`alloc_id`, `task_name`)
);
