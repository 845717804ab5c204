CREATE INDEX `allocations_job_id` ON `allocations` (`job_id`);--> statement-breakpoint
CREATE INDEX `evaluations_job_id` ON `evaluations` (`job_id`);