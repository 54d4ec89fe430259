CREATE TABLE `partition_migrations` (
	`table_name` text PRIMARY KEY NOT NULL,
	`moved` integer DEFAULT 0 NOT NULL,
	`leased_until` integer DEFAULT 0 NOT NULL,
	`done_at` text
);
--> statement-breakpoint
-- A deployment whose legacy tables are empty (a new one) has nothing to move: done from the start.
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'threads', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `threads`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'store_items', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `store_items`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'crons', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `crons`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'a2a_tasks', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `a2a_tasks`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'tracing_projects', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `tracing_projects`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'trace_shards', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `trace_shards`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'trace_feedback', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `trace_feedback`);
--> statement-breakpoint
INSERT INTO `partition_migrations` (`table_name`, `done_at`) SELECT 'trace_run_locations', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE NOT EXISTS (SELECT 1 FROM `trace_run_locations`);
