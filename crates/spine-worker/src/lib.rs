//! spine-worker
