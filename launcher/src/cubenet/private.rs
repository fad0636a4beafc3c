//! The job's own namespaces: `hcrun --link-rate` moves itself into a network and a mount
//! namespace of its own before it builds the emulated network ([`enter_private`]), and
//! starts each rank inside its node's namespace ([`open_ns`], [`enter_in_child`]). So the
//! whole network belongs to the job, and the kernel frees it with the job's last process.

use anyhow::{bail, Context, Result};

use super::spec::{netns_path, Spec};

/// Open node r's namespace, to enter it in a child before `exec` ([`enter_in_child`]).
pub fn open_ns(spec: &Spec, r: u32) -> Result<std::fs::File> {
    let p = netns_path(&spec.ns(r));
    std::fs::File::open(&p).with_context(|| format!("opening node {r}'s namespace {}", p.display()))
}

/// Make a child enter the network namespace `ns` between `fork` and `exec`.
pub fn enter_in_child(cmd: &mut tokio::process::Command, ns: std::fs::File) {
    use std::os::fd::AsRawFd;
    let fd = ns.as_raw_fd();
    // SAFETY: the closure runs in the forked child before exec and makes one
    // async-signal-safe system call (setns); `ns` is kept open by the closure (moved in)
    // and closed on exec (std opens files with O_CLOEXEC).
    unsafe {
        cmd.pre_exec(move || {
            let _keep = &ns;
            if libc::setns(fd, libc::CLONE_NEWNET) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

/// How the job's private namespaces were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privilege {
    /// Running as root: new network and mount namespaces.
    Root,
    /// Not root: an unprivileged user namespace in which this process is root.
    UserNamespace,
}

/// Move this process into namespaces of its own — a network namespace (the hub, with the
/// management bridge) and a mount namespace whose `/run/netns` is a fresh `tmpfs` — so
/// that everything [`super::build`] makes afterwards is the job's alone and disappears with its
/// last process. Not root: first a user namespace, where the kernel allows one.
///
/// Must be called while the process has one thread (before any runtime starts).
pub fn enter_private() -> Result<Privilege> {
    // SAFETY: geteuid/getegid have no preconditions.
    let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
    let privilege = if uid == 0 {
        Privilege::Root
    } else {
        Privilege::UserNamespace
    };
    let mut flags = libc::CLONE_NEWNET | libc::CLONE_NEWNS;
    if privilege == Privilege::UserNamespace {
        flags |= libc::CLONE_NEWUSER;
    }
    // SAFETY: unshare(2) only changes this process's namespaces.
    if unsafe { libc::unshare(flags) } == -1 {
        let e = std::io::Error::last_os_error();
        if privilege == Privilege::UserNamespace {
            bail!(
                "--link-rate builds a network of namespaces: that needs root, or unprivileged \
                 user namespaces, which this kernel refuses ({e}). Run hcrun as root (sudo), or \
                 allow them (sysctl kernel.unprivileged_userns_clone=1, or \
                 user.max_user_namespaces > 0; on Ubuntu also \
                 kernel.apparmor_restrict_unprivileged_userns=0)"
            );
        }
        bail!("--link-rate: cannot make the job's own network namespace: {e}");
    }
    if privilege == Privilege::UserNamespace {
        let write = |path: &str, text: String| {
            std::fs::write(path, text).with_context(|| format!("--link-rate: writing {path}"))
        };
        write("/proc/self/setgroups", "deny".into())?;
        write("/proc/self/uid_map", format!("0 {uid} 1"))?;
        write("/proc/self/gid_map", format!("0 {gid} 1"))?;
    }
    let c = |s: &str| std::ffi::CString::new(s).expect("no NUL in a constant path");
    let (none, root, tmpfs) = (c("none"), c("/"), c("tmpfs"));
    // SAFETY: mount(2) with valid C strings; changes only this mount namespace.
    if unsafe {
        libc::mount(
            none.as_ptr(),
            root.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        )
    } == -1
    {
        bail!(
            "--link-rate: cannot make the job's mounts private: {}",
            std::io::Error::last_os_error()
        );
    }
    // /run/netns: a tmpfs of our own. Where the host has no /run/netns and we may not
    // make one (a user namespace), the whole of /run gets a private tmpfs.
    let target = if std::path::Path::new("/run/netns").is_dir()
        || std::fs::create_dir_all("/run/netns").is_ok()
    {
        "/run/netns"
    } else {
        "/run"
    };
    let t = c(target);
    // SAFETY: as above.
    if unsafe {
        libc::mount(
            tmpfs.as_ptr(),
            t.as_ptr(),
            tmpfs.as_ptr(),
            0,
            std::ptr::null(),
        )
    } == -1
    {
        bail!(
            "--link-rate: cannot mount a private tmpfs on {target}: {}",
            std::io::Error::last_os_error()
        );
    }
    if target == "/run" {
        std::fs::create_dir_all("/run/netns").context("--link-rate: making /run/netns")?;
    }
    Ok(privilege)
}
