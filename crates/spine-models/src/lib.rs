//! spine-models
