//! spine-hooks
