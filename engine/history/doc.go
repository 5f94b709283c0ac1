// Package history keeps every finished run in a database, so that a new
// run can be judged against the runs before it and a metric's drift found
// across months of CI: the run's metadata and labels, its stages' summary
// rows as columns a user can query, and the whole result JSON, whose HDR
// histograms make pooling several runs into one baseline exact.
//
// Two stores share one schema: an embedded SQLite file (sqlite:FILE,
// through modernc.org/sqlite, pure Go) for one machine, and PostgreSQL
// (postgres://…, through pgx) for a team's shared store. The schema is
// versioned; migrations run in one transaction each, under a lock, so
// that two processes opening a new store at once migrate it once.
package history
