//! The progress thread: blocks in `poll(2)` on every link and a wake-up pipe, reads what
//! arrives (delivering or forwarding it) and writes what the sockets would not take at once.
//! It is what keeps forwarding alive while the node program computes or waits elsewhere.

use std::io::Read;
use std::os::fd::AsRawFd;
use std::sync::atomic::Ordering;

use super::Engine;

pub(super) fn run(e: &Engine) {
    let n = e.inputs.len();
    let mut fds: Vec<libc::pollfd> = Vec::with_capacity(n + 1);
    let link_fds: Vec<i32> = {
        let st = e.lock();
        st.out.iter().map(|o| o.stream.as_raw_fd()).collect()
    };
    let mut drain = [0u8; 64];
    while !e.stop.load(Ordering::SeqCst) {
        fds.clear();
        fds.push(libc::pollfd {
            fd: e.wake_rx.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        });
        let mut which = Vec::with_capacity(n);
        // A waiter is spinning on the sockets: stay out of its way, but look again soon
        // (it may return to computing without telling us) — forwarding is then delayed by
        // at most this timeout.
        let idle = e.spinners.load(Ordering::SeqCst) > 0;
        if !idle {
            let st = e.lock();
            for (k, fd) in link_fds.iter().enumerate() {
                if st.link_done[k] {
                    continue;
                }
                let mut ev = libc::POLLIN;
                if !st.out[k].queue.is_empty() {
                    ev |= libc::POLLOUT;
                }
                fds.push(libc::pollfd {
                    fd: *fd,
                    events: ev,
                    revents: 0,
                });
                which.push(k);
            }
        }
        // SAFETY: `fds` is a valid, exclusively borrowed array of `fds.len()` pollfd structs.
        let timeout_ms = if idle { 1 } else { 1000 };
        let r = unsafe { libc::poll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, timeout_ms) };
        if r < 0 {
            let err = std::io::Error::last_os_error();
            if err.kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            tracing::error!("poll failed: {err}");
            std::thread::sleep(std::time::Duration::from_millis(10));
            continue;
        }
        if fds[0].revents != 0 {
            while matches!((&e.wake_rx).read(&mut drain), Ok(n) if n > 0) {}
        }
        for (i, &k) in which.iter().enumerate() {
            let rev = fds[i + 1].revents;
            if rev & (libc::POLLIN | libc::POLLHUP | libc::POLLERR) != 0 {
                let mut inp = super::relock(e.inputs[k].lock());
                e.service_input(&mut inp, k);
            }
            if rev & libc::POLLOUT != 0 {
                let mut st = e.lock();
                e.flush(&mut st, k);
                e.notify();
            }
        }
    }
}
