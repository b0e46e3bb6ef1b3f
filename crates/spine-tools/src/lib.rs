//! spine-tools
