//! Host and node program for the host variants of the iPSC utilities (seed §2–§4, root
//! -32768): a broadcast from the host, GOP and GCAT results sent to the host, on the whole
//! cube and on two half cubes, through the idiomatic API and the compat names.

use anyhow::{ensure, Result};
use hypercube::ipsc::compat;
use hypercube::ipsc::Op;
use hypercube::{MsgType, TypeSel};

fn main() -> Result<()> {
    let node = hypercube::init()?;
    let (p, d) = (node.numnodes(), node.cubedim());
    let half = d.saturating_sub(1);
    if node.is_host() {
        node.gsend_from_host(MsgType(10), b"from the host".to_vec(), 0, d)?;
        let (src, sum) = node.gop_result::<f64>(MsgType(11))?;
        let want = (p * (p - 1) / 2) as f64;
        ensure!(
            src == 0 && sum == vec![want, p as f64],
            "GOP at host: {src} {sum:?}"
        );
        let all = node.recv(TypeSel::Is(12))?;
        let want: Vec<u8> = (0..p).map(|r| r as u8).collect();
        ensure!(all.data()[..] == want[..], "GCAT at host: {:?}", all.data());
        // Two half cubes each send their own result.
        let mut got = Vec::new();
        for _ in 0..(p / (1 << half)) {
            let (src, v) = node.gop_result::<i64>(MsgType(16))?;
            got.push((src, v[0]));
        }
        got.sort();
        let want: Vec<(u32, i64)> = (0..p)
            .step_by(1 << half)
            .map(|b| (b, (b..b + (1 << half)).map(i64::from).sum()))
            .collect();
        ensure!(got == want, "half-cube GOPs at host: {got:?} != {want:?}");
        // The seed's names.
        compat::gsendw(&node, 13, b"compat", 6, d as i32)?;
        let (_, maxes) = node.gop_result::<i32>(MsgType(14))?;
        ensure!(maxes == vec![p as i32 - 1], "compat GOP max {maxes:?}");
        let all = node.recv(TypeSel::Is(15))?;
        ensure!(
            all.len() == 2 * p as usize,
            "compat GCAT length {}",
            all.len()
        );
        // Not a member of any subcube.
        ensure!(node.gsend(b"x".to_vec(), 0).is_err());
        println!("OK host utilities");
    } else {
        let me = node.mynode();
        let b = node.grecv_from_host(MsgType(10), d)?;
        ensure!(&b[..] == b"from the host");
        let mut x = [me as f64, 1.0];
        node.gop_to_host(&mut x, Op::Sum, MsgType(11), d)?;
        node.gcat_to_host(vec![me as u8], MsgType(12), d)?;
        let mut y = [i64::from(me)];
        node.gop_to_host(&mut y, Op::Sum, MsgType(16), half)?;
        let mut buf = [0u8; 16];
        let mut cnt = 0;
        compat::grecvw_from_host(&node, 13, &mut buf, 16, &mut cnt, d as i32)?;
        ensure!(&buf[..cnt as usize] == b"compat");
        let mut z = [me as i32];
        let mut work = [0i32];
        compat::gop(
            &node,
            14,
            &mut z,
            1,
            'M',
            compat::HOST_ROOT,
            d as i32,
            &mut work,
        )?;
        let mut piece = [me as u8, 0xAA];
        compat::gcat(
            &node,
            15,
            &mut piece,
            2,
            2,
            &mut cnt,
            compat::HOST_ROOT,
            d as i32,
        )?;
        println!("OK node {me} host utilities");
    }
    Ok(())
}
