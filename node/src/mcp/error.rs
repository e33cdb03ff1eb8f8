//! [`ToolError`]: why the MCP server refused a call, and how a client
//! learns it. A tool refuses as the SDK refuses arguments that do not
//! parse: a result marked `isError` whose text names the argument and what
//! to send instead (the model reads it), with a stable `code`. Elsewhere an
//! MCP error: `-32602` (invalid params) for what the caller can fix,
//! `-32002` (resource not found) for a skill or file the node does not
//! serve, `-32603` for the node's own failure, whose cause goes to the log
//! and never to the client.

use rmcp::ErrorData;
use serde_json::json;

use crate::outcomes::OutcomeError;
use crate::store::StoreError;

/// A call refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// No shown skill of that name.
    #[error(
        "no skill named {0:?} is served here (there is none, or it is quarantined, retired, removed or waiting \
         for review); search_skills finds the skills there are"
    )]
    NoSuchSkill(String),
    /// The skill has no file at that path.
    #[error("skill {name:?} has no file {path:?}; list_skill_files lists its files")]
    NoSuchFile {
        /// The skill.
        name: String,
        /// The path asked for.
        path: String,
    },
    /// An argument is wrong; `code` names the problem.
    #[error("{message}")]
    Invalid {
        /// A short stable word.
        code: &'static str,
        /// What is wrong and what to send instead.
        message: String,
    },
    /// The node failed: the message says so, the log says why.
    #[error(
        "the node could not answer (an internal error); try again, and see the node's log if it persists"
    )]
    Internal,
}

impl ToolError {
    /// An argument refused: `code` names the problem, `message` says what to send.
    pub fn invalid(code: &'static str, message: impl Into<String>) -> ToolError {
        ToolError::Invalid { code, message: message.into() }
    }

    /// The node's own failure: logged with its cause, told without it.
    pub fn internal(cause: &dyn std::fmt::Display) -> ToolError {
        tracing::error!(error = %cause, "the MCP server failed to answer a call");
        ToolError::Internal
    }

    /// A refused outcome report, as the tool tells it.
    pub fn outcome(name: &str, error: OutcomeError) -> ToolError {
        match error {
            OutcomeError::Store(StoreError::NoSuchSkill(_)) => ToolError::NoSuchSkill(name.to_owned()),
            OutcomeError::Store(e) => ToolError::from(e),
            OutcomeError::Invalid { code, message } => ToolError::Invalid { code, message },
            too_many @ OutcomeError::TooMany { .. } => {
                ToolError::invalid("too_many_outcomes", too_many.to_string())
            }
        }
    }

    /// The stable word for the problem.
    pub fn code(&self) -> &'static str {
        match self {
            ToolError::NoSuchSkill(_) => "no_such_skill",
            ToolError::NoSuchFile { .. } => "no_such_file",
            ToolError::Invalid { code, .. } => code,
            ToolError::Internal => "internal",
        }
    }

    /// As the error of a resource read: a skill or file not served is "not found".
    pub fn as_resource_error(self) -> ErrorData {
        match self {
            ToolError::NoSuchSkill(_) | ToolError::NoSuchFile { .. } => {
                let data = json!({ "code": self.code() });
                ErrorData::resource_not_found(self.to_string(), Some(data))
            }
            other => other.into(),
        }
    }
}

impl From<StoreError> for ToolError {
    fn from(error: StoreError) -> ToolError {
        match error {
            StoreError::NoSuchSkill(name) => ToolError::NoSuchSkill(name),
            other => ToolError::internal(&other),
        }
    }
}

impl From<ToolError> for ErrorData {
    fn from(error: ToolError) -> ErrorData {
        let data = Some(json!({ "code": error.code() }));
        match error {
            ToolError::Internal => ErrorData::internal_error(error.to_string(), data),
            _ => ErrorData::invalid_params(error.to_string(), data),
        }
    }
}
