//! The PMI-1 client: how the manager hands this process its connection ([`PmiEnv`]), and
//! the conversation itself — one request line, one reply line (`wire::pmi` has the
//! format), every read bounded by the start-up deadline: `init` (with MPICH's port
//! handshake when dialed), `get_maxes`, `get_my_kvsname`, then `put`, `get`, `barrier_in`,
//! `abort` and `finalize` for the job's steps (`super`).

use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::net::UnixStream;
use std::time::Duration;

use crate::boot::deadline::Deadline;
use crate::error::{Error, Result};
use crate::wire::pmi::{self, Reply};

/// How the process manager handed this process its PMI connection.
#[derive(Debug, Clone)]
pub(crate) enum PmiEnv {
    /// An inherited socket (`PMI_FD`), with `PMI_RANK` and `PMI_SIZE`.
    Fd { fd: RawFd, rank: u32, size: u32 },
    /// A `host:port` to dial (`PMI_PORT`) and the id to present (`PMI_ID`); rank and size
    /// come from the manager (or `PMI_RANK`/`PMI_SIZE` when there is no id).
    Port {
        addr: String,
        id: Option<i64>,
        rank: Option<u32>,
        size: Option<u32>,
    },
}

impl PmiEnv {
    /// Read `PMI_FD` / `PMI_PORT` and friends; `None` when neither is set.
    pub fn from_env() -> Result<Option<PmiEnv>> {
        let num = |name: &str| -> Result<Option<u32>> {
            match std::env::var(name) {
                Err(_) => Ok(None),
                Ok(v) => v.trim().parse().map(Some).map_err(|_| {
                    Error::Config(format!(
                        "{name}={v:?} from the process manager is not a number"
                    ))
                }),
            }
        };
        if let Ok(v) = std::env::var("PMI_FD") {
            let fd: RawFd = v.trim().parse().ok().filter(|fd| *fd >= 0).ok_or_else(|| {
                Error::Config(format!("PMI_FD={v:?} is not a file descriptor number"))
            })?;
            let need = |name: &str| {
                num(name)?.ok_or_else(|| {
                    Error::Config(format!(
                        "PMI_FD is set but {name} is not: the process manager did not say \
                         who this process is"
                    ))
                })
            };
            return Ok(Some(PmiEnv::Fd {
                fd,
                rank: need("PMI_RANK")?,
                size: need("PMI_SIZE")?,
            }));
        }
        if let Ok(addr) = std::env::var("PMI_PORT") {
            let id = match std::env::var("PMI_ID") {
                Err(_) => None,
                Ok(v) => Some(
                    v.trim()
                        .parse()
                        .map_err(|_| Error::Config(format!("PMI_ID={v:?} is not a number")))?,
                ),
            };
            return Ok(Some(PmiEnv::Port {
                addr,
                id,
                rank: num("PMI_RANK")?,
                size: num("PMI_SIZE")?,
            }));
        }
        Ok(None)
    }
}

/// The socket to the process manager: inherited (usually a socketpair) or dialed.
pub(super) enum Stream {
    Unix(UnixStream),
    Tcp(TcpStream),
}

impl Stream {
    fn set_timeout(&self, t: Option<Duration>) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.set_read_timeout(t).and_then(|_| s.set_write_timeout(t)),
            Stream::Tcp(s) => s.set_read_timeout(t).and_then(|_| s.set_write_timeout(t)),
        }
    }
    pub(super) fn raw(&self) -> RawFd {
        match self {
            Stream::Unix(s) => s.as_raw_fd(),
            Stream::Tcp(s) => s.as_raw_fd(),
        }
    }
    fn write_line(&mut self, line: &str) -> std::io::Result<()> {
        match self {
            Stream::Unix(s) => s.write_all(line.as_bytes()),
            Stream::Tcp(s) => s.write_all(line.as_bytes()),
        }
    }
    fn read_some(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }
}

/// A PMI-1 client: one request, one reply, every read bounded by the start-up deadline.
pub(crate) struct Client {
    pub(super) stream: Stream,
    /// Bytes read past the last line (a well-behaved server sends none).
    pending: Vec<u8>,
    kvsname: String,
    keylen_max: usize,
    vallen_max: usize,
    pub(super) rank: u32,
    pub(super) size: u32,
}

fn pm_error(what: impl std::fmt::Display) -> Error {
    Error::Bootstrap(format!(
        "the process manager (PMI-1): {what}. Was this program started by `mpiexec` (MPICH \
         Hydra) or `srun --mpi=pmi2`? See docs/clusters.md"
    ))
}

impl Client {
    /// Connect (or take the inherited socket), `init`, `get_maxes`, `get_my_kvsname`.
    pub fn connect(env: &PmiEnv, d: Deadline) -> Result<Client> {
        let (stream, mut rank, mut size) = match env {
            PmiEnv::Fd { fd, rank, size } => (Stream::Unix(adopt_fd(*fd)?), *rank, *size),
            PmiEnv::Port {
                addr, rank, size, ..
            } => {
                let sa = addr
                    .to_socket_addrs()
                    .ok()
                    .and_then(|mut a| a.next())
                    .ok_or_else(|| pm_error(format!("PMI_PORT={addr:?} is not a host:port")))?;
                let t = d.left("connecting to the process manager")?;
                let s = TcpStream::connect_timeout(&sa, t)
                    .map_err(|e| pm_error(format!("cannot connect to PMI_PORT={addr} ({e})")))?;
                let _ = s.set_nodelay(true);
                (Stream::Tcp(s), rank.unwrap_or(0), size.unwrap_or(1))
            }
        };
        let mut c = Client {
            stream,
            pending: Vec::new(),
            kvsname: String::new(),
            keylen_max: 64,
            vallen_max: 256,
            rank,
            size,
        };
        if let PmiEnv::Port { id: Some(id), .. } = env {
            // MPICH's port handshake: initack, then size, rank and debug as `set` lines.
            let r = c.call("initack", &[("pmiid", &id.to_string())], "initack", d)?;
            drop(r);
            for _ in 0..3 {
                let r = c.read_reply(d, "the port handshake")?;
                if r.cmd != "set" {
                    return Err(pm_error(format!("expected cmd=set, got cmd={}", r.cmd)));
                }
                if let Some(v) = r.get("size") {
                    size = v.parse().map_err(|_| pm_error(format!("size={v:?}")))?;
                }
                if let Some(v) = r.get("rank") {
                    rank = v.parse().map_err(|_| pm_error(format!("rank={v:?}")))?;
                }
            }
            c.rank = rank;
            c.size = size;
        }
        let r = c.call(
            "init",
            &[("pmi_version", "1"), ("pmi_subversion", "1")],
            "response_to_init",
            d,
        )?;
        let version = r.get("pmi_version").unwrap_or("1");
        let sub: u32 = r.get("pmi_subversion").unwrap_or("1").parse().unwrap_or(0);
        if r.rc().map_err(pm_error)? != 0 || version != "1" || sub < 1 {
            return Err(pm_error(format!(
                "it does not speak PMI 1.1 (it answered pmi_version={version} \
                 pmi_subversion={sub}, rc={:?})",
                r.get("rc").unwrap_or("")
            )));
        }
        let r = c.call("get_maxes", &[], "maxes", d)?;
        let field = |k: &str, default: usize| -> usize {
            r.get(k).and_then(|v| v.parse().ok()).unwrap_or(default)
        };
        c.keylen_max = field("keylen_max", 64);
        c.vallen_max = field("vallen_max", 256);
        let r = c.call("get_my_kvsname", &[], "my_kvsname", d)?;
        c.kvsname = r
            .get("kvsname")
            .filter(|k| !k.is_empty())
            .ok_or_else(|| pm_error("its my_kvsname reply names no kvsname"))?
            .to_string();
        if c.rank >= c.size {
            return Err(pm_error(format!(
                "rank {} in a job of {} processes",
                c.rank, c.size
            )));
        }
        Ok(c)
    }

    /// One request, one reply whose `cmd` must be `expect`.
    pub(super) fn call(
        &mut self,
        cmd: &str,
        pairs: &[(&str, &str)],
        expect: &str,
        d: Deadline,
    ) -> Result<Reply> {
        let line = pmi::request(cmd, pairs).map_err(pm_error)?;
        self.stream
            .set_timeout(Some(d.left(&format!("PMI {cmd}"))?))
            .map_err(|e| Error::io("configuring the PMI socket", e))?;
        self.stream
            .write_line(&line)
            .map_err(|e| pm_error(format!("sending cmd={cmd} failed ({e})")))?;
        let r = self.read_reply(d, &format!("the reply to cmd={cmd}"))?;
        if r.cmd != expect {
            return Err(pm_error(format!(
                "it answered cmd={cmd} with cmd={} (expected cmd={expect})",
                r.cmd
            )));
        }
        Ok(r)
    }

    fn read_reply(&mut self, d: Deadline, what: &str) -> Result<Reply> {
        loop {
            if let Some(i) = self.pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=i).collect();
                return pmi::parse_reply(&line)
                    .map_err(|e| pm_error(format!("{what} is garbage: {e}")));
            }
            if self.pending.len() > pmi::MAX_LINE {
                return Err(pm_error(format!(
                    "{what} is longer than {} bytes",
                    pmi::MAX_LINE
                )));
            }
            self.stream
                .set_timeout(Some(d.left(what)?))
                .map_err(|e| Error::io("configuring the PMI socket", e))?;
            let mut buf = [0u8; 1024];
            match self.stream.read_some(&mut buf) {
                Ok(0) => return Err(pm_error(format!("it closed the connection before {what}"))),
                Ok(n) => self.pending.extend_from_slice(&buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    return Err(d.expired(format!("waiting for {what} from the process manager")))
                }
                Err(e) => return Err(pm_error(format!("reading {what} failed ({e})"))),
            }
        }
    }

    fn check_key_value(&self, key: &str, value: &str) -> Result<()> {
        if key.starts_with("PMI_") {
            return Err(pm_error(format!(
                "the key {key} is reserved for the manager"
            )));
        }
        if key.len() > self.keylen_max || value.len() > self.vallen_max {
            return Err(pm_error(format!(
                "the pair {key}={value} exceeds its limits (keys {} bytes, values {})",
                self.keylen_max, self.vallen_max
            )));
        }
        Ok(())
    }

    /// Publish `key=value` (visible to the others after the next barrier).
    pub(super) fn put(&mut self, key: &str, value: &str, d: Deadline) -> Result<()> {
        self.check_key_value(key, value)?;
        let kvs = self.kvsname.clone();
        let r = self.call(
            "put",
            &[("kvsname", &kvs), ("key", key), ("value", value)],
            "put_result",
            d,
        )?;
        match r.rc().map_err(pm_error)? {
            0 => Ok(()),
            rc => Err(pm_error(format!(
                "put of {key} failed (rc={rc}, {})",
                r.get("msg").unwrap_or("no message")
            ))),
        }
    }

    /// Read a key; `None` when the manager has no such key (it answers at once).
    pub(super) fn get(&mut self, key: &str, d: Deadline) -> Result<Option<String>> {
        let kvs = self.kvsname.clone();
        let r = self.call("get", &[("kvsname", &kvs), ("key", key)], "get_result", d)?;
        Ok(match r.rc().map_err(pm_error)? {
            0 => r.get("value").map(str::to_string),
            _ => None,
        })
    }

    pub(super) fn barrier(&mut self, d: Deadline) -> Result<()> {
        self.call("barrier_in", &[], "barrier_out", d).map(drop)
    }

    /// Ask the manager to stop the whole job. Nothing is read back (it kills us).
    pub(super) fn send_abort(&mut self, reason: &str) {
        let msg = pmi::sanitize(reason, 600);
        let msg = if msg.is_empty() { "abort".into() } else { msg };
        if let Ok(line) = pmi::request("abort", &[("exitcode", "1"), ("error_msg", &msg)]) {
            let _ = self.stream.set_timeout(Some(Duration::from_secs(1)));
            let _ = self.stream.write_line(&line);
        }
    }
}

/// Take ownership of the inherited PMI socket (after checking it is one) and keep it from
/// leaking into child processes.
fn adopt_fd(fd: RawFd) -> Result<UnixStream> {
    // SAFETY: fstat on a descriptor number only reads its status (EBADF if not open).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd, &mut st) } != 0 || st.st_mode & libc::S_IFMT != libc::S_IFSOCK {
        return Err(pm_error(format!(
            "PMI_FD={fd} is not an open socket in this process (was it started by a \
             launcher that closed it, or through a wrapper that did?)"
        )));
    }
    // SAFETY: the descriptor is open and a socket; the manager handed it to this process
    // for its PMI conversation, which this client now owns.
    unsafe {
        libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC);
        Ok(UnixStream::from(OwnedFd::from_raw_fd(fd)))
    }
}
