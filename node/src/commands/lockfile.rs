pub(crate) fn lock(_g: &crate::cli::GlobalArgs, _a: &crate::cli::LockArgs) -> anyhow::Result<std::process::ExitCode> { todo!() }
pub(crate) fn install(_g: &crate::cli::GlobalArgs, _a: &crate::cli::InstallArgs) -> anyhow::Result<std::process::ExitCode> { todo!() }
pub(crate) fn verify(_g: &crate::cli::GlobalArgs, _a: &crate::cli::VerifyArgs) -> anyhow::Result<std::process::ExitCode> { todo!() }
