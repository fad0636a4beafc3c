//! Socket options of a link: buffer sizes and the TCP congestion control.
//!
//! Why the congestion control matters on loopback (figures in `docs/perf/analysis.md`,
//! session 3): with this VM's default, BBR, a 1 MiB ping-pong between two spinning readers
//! took 190–280 µs. BBR paces its segments from a timer, so one flow is transmitted from
//! two CPUs, and loopback delivers what each CPU sends through that CPU's backlog: segments
//! arrive out of order (`TCPOFOQueue`), SACK recovery and spurious fast retransmits follow
//! (`TcpRetransSegs`, `TCPDSACKRecv` in `nstat`), and the window shrinks. With CUBIC or Reno
//! there is no pacing, no reordering, and the same exchange took 95–140 µs; 4 MiB bandwidth
//! rose from ~3.5–4 to 5–6 GB/s. With more ranks than cores, though, CUBIC was slower for
//! collectives (more wake-ups), so `Tuning` then keeps the system's choice.

use std::net::TcpStream;
use std::os::fd::AsRawFd;

/// Ask for socket buffers of `bytes` each way (0: leave the kernel's autotuning alone).
pub(crate) fn set_buffers(s: &TcpStream, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
        // SAFETY: setsockopt on our own open socket with a pointer to a live c_int.
        unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::SOL_SOCKET,
                opt,
                (&v as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            );
        }
    }
}

/// Set the link's congestion control to the first of `names` the kernel accepts; returns
/// the one set, or `None` when none was accepted (the system's default stays, which only
/// costs speed, so it is logged rather than an error). An empty list leaves the default.
pub(crate) fn set_congestion<'a, S: AsRef<str>>(s: &TcpStream, names: &'a [S]) -> Option<&'a str> {
    for name in names {
        let name = name.as_ref();
        // SAFETY: setsockopt on our own open socket with a pointer to a live byte buffer of
        // the length given.
        let rc = unsafe {
            libc::setsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                name.as_ptr().cast(),
                name.len() as libc::socklen_t,
            )
        };
        if rc == 0 {
            return Some(name);
        }
        tracing::debug!(
            "TCP congestion control {name:?} refused: {}",
            std::io::Error::last_os_error()
        );
    }
    if !names.is_empty() {
        let asked: Vec<&str> = names.iter().map(AsRef::as_ref).collect();
        tracing::debug!("keeping the system's TCP congestion control (asked for {asked:?})");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option really reaches the socket: read it back with getsockopt.
    fn congestion_of(s: &TcpStream) -> String {
        let mut buf = [0u8; 16];
        let mut len = buf.len() as libc::socklen_t;
        // SAFETY: getsockopt into a live buffer of the length given.
        let rc = unsafe {
            libc::getsockopt(
                s.as_raw_fd(),
                libc::IPPROTO_TCP,
                libc::TCP_CONGESTION,
                buf.as_mut_ptr().cast(),
                &mut len,
            )
        };
        assert_eq!(rc, 0, "getsockopt: {}", std::io::Error::last_os_error());
        let end = buf.iter().position(|&b| b == 0).unwrap_or(len as usize);
        String::from_utf8_lossy(&buf[..end]).into_owned()
    }

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn default_congestion_is_set_or_reported() {
        let (a, _b) = pair();
        match set_congestion(&a, &crate::transport::Tuning::default().congestion) {
            Some(name) => assert_eq!(congestion_of(&a), name),
            // A kernel without either (not seen on Linux): the system's stays.
            None => assert!(!congestion_of(&a).is_empty()),
        }
    }

    #[test]
    fn unknown_congestion_falls_through_and_keeps_the_system_default() {
        let (a, _b) = pair();
        let before = congestion_of(&a);
        assert_eq!(set_congestion(&a, &["no-such-algorithm"]), None);
        assert_eq!(congestion_of(&a), before);
        assert_eq!(set_congestion::<&str>(&a, &[]), None);
        assert_eq!(
            set_congestion(&a, &["no-such-algorithm", "reno"]),
            Some("reno")
        );
        assert_eq!(congestion_of(&a), "reno");
    }
}
