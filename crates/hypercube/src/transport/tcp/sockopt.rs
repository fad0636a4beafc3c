//! Socket options of a link: buffer sizes, the TCP congestion control, and the bound on
//! how long a dead link goes unnoticed ([`set_liveness`]).
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
use std::time::Duration;

/// `setsockopt` of one `c_int` option on our own socket.
fn set_int(
    s: &TcpStream,
    level: libc::c_int,
    opt: libc::c_int,
    v: libc::c_int,
) -> std::io::Result<()> {
    // SAFETY: setsockopt on our own open socket with a pointer to a live c_int.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            level,
            opt,
            (&v as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Send at once what the kernel holds back of the bytes written (setting `TCP_NODELAY`,
/// already on, pushes the pending segments). Linux *autocorks* a short segment — the tail
/// of a write that did not fill its last 64 KiB packet — while an earlier packet of the
/// socket still waits in a queue of the host, and sends it only when that packet leaves:
/// on a shaped or slow link (the emulated cube's `tbf`, a NIC at its line rate) a frame of
/// 64 KiB and a few bytes then arrives a packet's time late. `TCP_NODELAY` does not turn
/// autocorking off, and `net.ipv4.tcp_autocorking` is the host's, not the program's.
pub(crate) fn push(s: &TcpStream) {
    let _ = set_int(s, libc::IPPROTO_TCP, libc::TCP_NODELAY, 1);
}

/// Let the kernel hold at most `bytes` of this socket's written data not yet sent
/// (`TCP_NOTSENT_LOWAT`; 0 leaves the kernel's default, the whole send buffer): a write
/// beyond it returns `WouldBlock` and the socket polls writable again once the unsent part
/// is below it, so the rest waits in the link's own queue, where a flow-control frame can
/// still go ahead of it (`LinkOut::enqueue`). On a slow link a clear-to-send written
/// behind megabytes of unsent data waits their time on the link.
pub(crate) fn set_notsent_lowat(s: &TcpStream, bytes: usize) -> std::io::Result<()> {
    if bytes == 0 {
        return Ok(());
    }
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    set_int(s, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT, v)
}

/// An integer option of our own socket, read back with `getsockopt` (the tests' view of
/// what the setters here set).
#[cfg(test)]
pub(crate) fn int_of(s: &TcpStream, level: libc::c_int, opt: libc::c_int) -> libc::c_int {
    let mut v: libc::c_int = -1;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt into a live c_int of the length given.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            level,
            opt,
            (&mut v as *mut libc::c_int).cast(),
            &mut len,
        )
    };
    assert_eq!(rc, 0, "getsockopt: {}", std::io::Error::last_os_error());
    v
}

/// Bound how long the link stays silent before the kernel gives up on it (`timeout`; zero
/// leaves the kernel's defaults, many minutes). Two mechanisms of the kernel, no frame of
/// ours (`docs/reliability.md`, "Dead links"):
///
/// - `TCP_USER_TIMEOUT`: when bytes sent stay unacknowledged for `timeout` (the peer's
///   kernel, not its program, acknowledges — a slow reader is not dead), the connection is
///   aborted and the next read or write fails with `ETIMEDOUT`;
/// - keepalive, idle after `timeout / 3` (at least 1 s), then a probe a second: an idle
///   link is probed too, and with the user timeout set the kernel aborts once nothing has
///   come for `timeout` and a probe is out — so the end with nothing to send also learns.
pub(crate) fn set_liveness(s: &TcpStream, timeout: Duration) -> std::io::Result<()> {
    if timeout.is_zero() {
        return Ok(());
    }
    let ms = timeout.as_millis().clamp(1, i32::MAX as u128) as libc::c_int;
    let idle = (timeout.as_secs() / 3).clamp(1, i32::MAX as u64 / 2) as libc::c_int;
    let count = (timeout.as_secs() as libc::c_int).clamp(1, 127);
    set_int(s, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT, ms)?;
    set_int(s, libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1)?;
    set_int(s, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, idle)?;
    set_int(s, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1)?;
    set_int(s, libc::IPPROTO_TCP, libc::TCP_KEEPCNT, count)
}

/// Bytes written to the socket that the peer's kernel has not acknowledged yet, sent or not
/// (`SIOCOUTQ`: `write_seq - snd_una`); 0 if the kernel does not say.
pub(crate) fn unacknowledged(s: &TcpStream) -> usize {
    let mut n: libc::c_int = 0;
    // SAFETY: SIOCOUTQ (= TIOCOUTQ) on our own open socket writes one c_int.
    let rc = unsafe { libc::ioctl(s.as_raw_fd(), libc::TIOCOUTQ, &mut n) };
    if rc == 0 {
        n.max(0) as usize
    } else {
        0
    }
}

/// How long ago the socket last received an acknowledgement from its peer's kernel
/// (`TCP_INFO`'s `tcpi_last_ack_recv`); `None` if the kernel does not say. On a live link
/// it stays short even when idle: keepalive probes are acknowledged every second.
pub(crate) fn since_last_ack(s: &TcpStream) -> Option<Duration> {
    // SAFETY: an all-zero tcp_info is a valid value of this plain C struct.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    // SAFETY: getsockopt into a live tcp_info of the length given.
    let rc = unsafe {
        libc::getsockopt(
            s.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            (&mut info as *mut libc::tcp_info).cast(),
            &mut len,
        )
    };
    (rc == 0).then(|| Duration::from_millis(u64::from(info.tcpi_last_ack_recv)))
}

/// Ask for socket buffers of `bytes` each way (0: leave the kernel's autotuning alone).
pub(crate) fn set_buffers(s: &TcpStream, bytes: usize) {
    if bytes == 0 {
        return;
    }
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    for opt in [libc::SO_SNDBUF, libc::SO_RCVBUF] {
        let _ = set_int(s, libc::SOL_SOCKET, opt, v);
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

/// A link's congestion control as the kernel reports it (the tests read back what was
/// asked for).
#[cfg(test)]
pub(crate) fn congestion_of(s: &TcpStream) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pair() -> (TcpStream, TcpStream) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
        let (b, _) = l.accept().unwrap();
        (a, b)
    }

    #[test]
    fn notsent_lowat_reaches_the_socket_and_zero_leaves_the_default() {
        let (a, _b) = pair();
        let lowat = |s: &TcpStream| int_of(s, libc::IPPROTO_TCP, libc::TCP_NOTSENT_LOWAT);
        let default = lowat(&a);
        set_notsent_lowat(&a, 0).unwrap();
        assert_eq!(lowat(&a), default);
        set_notsent_lowat(&a, 16 << 10).unwrap();
        assert_eq!(lowat(&a), 16 << 10);
    }

    #[test]
    fn liveness_reaches_the_socket_and_zero_leaves_the_defaults() {
        let (a, b) = pair();
        set_liveness(&a, Duration::from_millis(3000)).unwrap();
        assert_eq!(int_of(&a, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT), 3000);
        assert_eq!(int_of(&a, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 1);
        assert_eq!(int_of(&a, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 1);
        assert_eq!(int_of(&a, libc::IPPROTO_TCP, libc::TCP_KEEPINTVL), 1);
        set_liveness(&a, Duration::from_secs(30)).unwrap();
        assert_eq!(
            int_of(&a, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT),
            30_000
        );
        assert_eq!(int_of(&a, libc::IPPROTO_TCP, libc::TCP_KEEPIDLE), 10);
        set_liveness(&b, Duration::ZERO).unwrap();
        assert_eq!(int_of(&b, libc::IPPROTO_TCP, libc::TCP_USER_TIMEOUT), 0);
        assert_eq!(int_of(&b, libc::SOL_SOCKET, libc::SO_KEEPALIVE), 0);
    }

    #[test]
    fn unacknowledged_bytes_are_counted_until_acknowledged() {
        let (a, mut b) = pair();
        assert_eq!(unacknowledged(&a), 0);
        // The peer's kernel acknowledges what it buffers, read or not: soon zero again.
        std::io::Write::write_all(&mut &a, &[7u8; 1000]).unwrap();
        let t0 = std::time::Instant::now();
        while unacknowledged(&a) != 0 {
            assert!(t0.elapsed() < Duration::from_secs(5), "never acknowledged");
            std::thread::sleep(Duration::from_millis(1));
        }
        // A peer that reads nothing: its window closes, and the rest stays unacknowledged.
        a.set_nonblocking(true).unwrap();
        let chunk = vec![0u8; 64 << 10];
        while std::io::Write::write(&mut &a, &chunk).is_ok() {}
        assert!(unacknowledged(&a) > 0);
        let mut buf = [0u8; 10];
        std::io::Read::read_exact(&mut b, &mut buf).unwrap();
    }

    /// The kernel does what the bound promises: a peer that stops acknowledging (here: a
    /// receiver that never reads, so the window closes — the same clock) makes the writer
    /// fail with `ETIMEDOUT` after about the timeout, not minutes later.
    #[test]
    fn unacknowledged_bytes_time_out_after_the_bound() {
        let (a, _b) = pair();
        set_liveness(&a, Duration::from_millis(300)).unwrap();
        a.set_nonblocking(true).unwrap();
        let chunk = vec![0u8; 64 << 10];
        let t0 = std::time::Instant::now();
        let err = loop {
            assert!(t0.elapsed() < Duration::from_secs(20), "no timeout in 20 s");
            match std::io::Write::write(&mut &a, &chunk) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(10))
                }
                Err(e) => break e,
            }
        };
        assert_eq!(err.raw_os_error(), Some(libc::ETIMEDOUT), "{err}");
    }

    #[test]
    fn default_congestion_is_set_or_reported() {
        let (a, _b) = pair();
        match set_congestion(&a, &super::super::tuning::Tuning::default().congestion) {
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
