//! ecp_endpoints (to be written)
