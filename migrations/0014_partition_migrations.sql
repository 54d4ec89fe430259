CREATE TABLE `partition_migrations` (
	`table_name` text PRIMARY KEY NOT NULL,
	`moved` integer DEFAULT 0 NOT NULL,
	`leased_until` integer DEFAULT 0 NOT NULL,
	`done_at` text
);
