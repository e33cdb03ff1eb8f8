//! Tests of the MCP tool handlers.
