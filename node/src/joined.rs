//! A blocking task's failure, told without its panic message.
//!
//! `tokio`'s `JoinError` shows a panicking task's message ("task 7
//! panicked with message …"), and a panic's message may quote whatever the
//! code was handling — a skill's body, a path on this machine. Where such a
//! failure becomes an error that is answered, stored (a peer's last error)
//! or logged, this fixed text stands in for it; the panic hook has already
//! printed the message to the process's standard error, where an operator
//! looks for a bug's details.

use tokio::task::JoinError;

/// What a failed blocking task is called in errors: a panic (a bug) or a
/// task cancelled as the runtime shut down.
pub(crate) fn described(e: &JoinError) -> &'static str {
    if e.is_panic() {
        "an internal task panicked (a bug: please report it with the node's standard error); its store \
         transaction, if it had one, was rolled back"
    } else {
        "an internal task was cancelled as the node shut down"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_is_told_without_its_message_and_a_cancel_as_one() {
        let panicked = tokio::task::spawn_blocking(|| panic!("secret body /home/someone/.ssh/id_rsa"))
            .await
            .expect_err("it panicked");
        assert!(panicked.to_string().contains("id_rsa"), "tokio's own text shows the message");
        let told = described(&panicked);
        assert!(told.contains("panicked") && !told.contains("id_rsa") && !told.contains("secret"), "{told}");

        let pending = tokio::spawn(std::future::pending::<()>());
        pending.abort();
        let cancelled = pending.await.expect_err("it was cancelled");
        assert!(described(&cancelled).contains("cancelled"));
    }
}
