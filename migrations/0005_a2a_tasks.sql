CREATE TABLE `a2a_tasks` (
	`task_id` text PRIMARY KEY NOT NULL,
	`workspace_id` text NOT NULL,
	`thread_id` text NOT NULL,
	`assistant_id` text NOT NULL,
	`created_at` text NOT NULL
);
