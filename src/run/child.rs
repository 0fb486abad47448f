//! The wrapped command's life: it keeps the terminal, gets the signals toolmend gets, and its
//! exit status becomes toolmend's.

use std::process::ExitStatus;
use tokio::process::Child;

/// The signals toolmend passes on, installed before the command starts so that none arrives
/// while toolmend would still die of it.
pub struct Signals {
    #[cfg(unix)]
    interrupt: tokio::signal::unix::Signal,
    #[cfg(unix)]
    terminate: tokio::signal::unix::Signal,
    #[cfg(unix)]
    hangup: tokio::signal::unix::Signal,
}

impl Signals {
    pub fn install() -> std::io::Result<Self> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Ok(Self {
                interrupt: signal(SignalKind::interrupt())?,
                terminate: signal(SignalKind::terminate())?,
                hangup: signal(SignalKind::hangup())?,
            })
        }
        #[cfg(not(unix))]
        Ok(Self {})
    }

    /// Waits for `child`, passing on SIGINT, SIGTERM and SIGHUP until it ends.
    #[cfg(unix)]
    pub async fn supervise(mut self, mut child: Child) -> std::io::Result<ExitStatus> {
        loop {
            tokio::select! {
                status = child.wait() => return status,
                _ = self.interrupt.recv() => {
                    if !terminal_delivers_interrupts() {
                        send(&child, libc::SIGINT);
                    }
                }
                _ = self.terminate.recv() => send(&child, libc::SIGTERM),
                _ = self.hangup.recv() => send(&child, libc::SIGHUP),
            }
        }
    }

    /// The console sends Ctrl-C to every process attached to it, the child included.
    #[cfg(not(unix))]
    pub async fn supervise(self, mut child: Child) -> std::io::Result<ExitStatus> {
        loop {
            tokio::select! {
                status = child.wait() => return status,
                _ = tokio::signal::ctrl_c() => {}
            }
        }
    }
}

/// Ends the command with SIGTERM should toolmend die without passing a signal on (SIGKILL, a
/// crash): the command must not go on talking to a sidecar that is gone. Linux only.
pub fn die_with_parent(command: &mut tokio::process::Command) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getpid takes no pointers.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the closure runs in the forked child before exec, calls only prctl and getppid
        // (async-signal-safe) and allocates nothing.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                // toolmend died before the request took effect: nobody would send it. (A signal
                // to itself would run toolmend's inherited handlers, not end it: fail the start.)
                if libc::getppid() != parent {
                    // No allocation after fork: a raw OS error (no such process: the parent).
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = command;
}

/// Ctrl-C in a terminal signals its whole foreground process group, and the child is in
/// toolmend's group: passing the signal on as well would deliver it twice, which many programs
/// (Claude Code among them) read as "exit now".
#[cfg(unix)]
fn terminal_delivers_interrupts() -> bool {
    // SAFETY: getpgrp and tcgetpgrp take no pointers; tcgetpgrp on a descriptor that is not a
    // terminal returns -1, which matches no group.
    let group = unsafe { libc::getpgrp() };
    [0, 1, 2].into_iter().any(|fd| unsafe { libc::tcgetpgrp(fd) } == group)
}

#[cfg(unix)]
fn send(child: &Child, signal: libc::c_int) {
    // No id: the child has been reaped already, and the pid may belong to someone else.
    let Some(pid) = child.id().and_then(|id| libc::pid_t::try_from(id).ok()) else { return };
    // SAFETY: kill takes no pointers; a child that exited in between is an ESRCH, ignored.
    unsafe { libc::kill(pid, signal) };
}

/// The command's own code, or 128 + the signal that ended it (the shell's convention).
pub fn exit_code(status: ExitStatus) -> u8 {
    if let Some(code) = status.code() {
        return (code & 0xff) as u8;
    }
    #[cfg(unix)]
    if let Some(signal) = std::os::unix::process::ExitStatusExt::signal(&status) {
        return (128 + signal).clamp(0, 255) as u8;
    }
    1
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn exit_codes_follow_the_shell() {
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGINT)), 130);
        assert_eq!(exit_code(ExitStatus::from_raw(libc::SIGKILL)), 137);
    }
}
