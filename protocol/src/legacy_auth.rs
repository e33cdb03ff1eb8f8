//! legacy_auth (in progress)
