//! `prove` never prints a wrong verdict (issue 25), on the CPU engine: a small fault campaign
//! (the big one is scripts/fault-campaign.sh) with LL's exact check and with PRP's Gerbicz check,
//! spot checks off; and resume never brings back a wrong or foreign state: a saved residue with a
//! flipped bit (checksum recomputed) falls back to the previous save, a state of another test is
//! not used, a second `prove` of the same test stops at once, a different `--shift` and an LL
//! `--gerbicz-block` are refused.

mod common;
use common::{json, stderr, Env};
use mersenne_cert::exponent::TestKind;
use mersenne_cert::run::state::SavedState;

/// A small deterministic generator (xorshift64*), so that failures reproduce.
struct Rng(u64);
impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n.max(1)
    }
}

/// A fault `ITER:WORD:BIT` for a test of `total` iterations: a third in the first 1%, a third
/// in the last 1%, a third anywhere.
fn random_fault(rng: &mut Rng, p: u64, total: u64) -> String {
    let edge = total / 100 + 1;
    let it = match rng.below(3) {
        0 => 1 + rng.below(edge),
        1 => total - rng.below(edge),
        _ => 1 + rng.below(total),
    };
    format!("{it}:{}:{}", rng.below(p / 64 + 1), rng.below(64))
}

fn res64(env: &Env, args: &[&str]) -> String {
    json(&env.prove(args))["res64"].as_str().unwrap().to_string()
}

#[test]
fn small_fault_campaign_ends_with_no_wrong_result() {
    let env = Env::new();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for (p, prp) in [("9689", false), ("9697", false), ("9697", true)] {
        let kind: &[&str] = if prp { &["--prp", "--no-proof"] } else { &["--ll-check", "double"] };
        let want = res64(&env, &[&[p, "--spot", "off", "--fresh"], kind].concat());
        if p == "9689" {
            assert_eq!(want, "0000000000000000", "M9689 is prime");
        }
        let n: u64 = p.parse().unwrap();
        let total = if prp { n } else { n - 2 };
        for _ in 0..8 {
            let f = random_fault(&mut rng, n, total);
            let o = env.prove(&[&[p, "--spot", "off", "--fresh", "--inject-fault", &f], kind].concat());
            assert!(o.status.success(), "M{p} prp={prp} fault {f}: {}", stderr(&o));
            let j = json(&o);
            assert_eq!(j["res64"], want.as_str(), "M{p} prp={prp} fault {f}: {j}");
        }
    }
}

#[test]
fn a_prime_ll_residue_is_confirmed_before_it_is_printed() {
    let env = Env::new();
    let j = json(&env.prove(&["9689", "--spot", "off", "--ll-check", "jacobi"]));
    assert_eq!(j["status"], "P");
    assert_eq!(j["mersenne-cert"]["checks"]["confirmation_reruns"], 1, "{j}");
    assert!(j["mersenne-cert"]["checks"]["double_checks"].as_u64().unwrap() >= 1, "{j}");
}

/// Read a state file (blake3 ‖ CBOR), change it, write it back with its checksum recomputed.
fn rewrite_state(path: &std::path::Path, change: impl Fn(&mut SavedState)) {
    let bytes = std::fs::read(path).unwrap();
    let mut s: SavedState = ciborium::from_reader(&bytes[32..]).unwrap();
    change(&mut s);
    let mut payload = Vec::new();
    ciborium::into_writer(&s, &mut payload).unwrap();
    let mut out = blake3::hash(&payload).as_bytes().to_vec();
    out.extend_from_slice(&payload);
    std::fs::write(path, out).unwrap();
}

/// Two saves of M20011 LL (at the stops after 4000 and 9000 iterations).
fn two_saves(env: &Env) -> std::path::PathBuf {
    for stop in ["4000", "9000"] {
        let o = env.prove(&["20011", "--spot", "off", "--ll-check", "jacobi", "--shift", "7", "--stop-after", stop]);
        assert_eq!(o.status.code(), Some(130), "{}", stderr(&o));
    }
    let dir = env.path("state").join("M20011-LL");
    assert!(dir.join("state.prev.cbor").exists());
    dir
}

#[test]
fn a_flipped_saved_residue_falls_back_to_the_previous_save() {
    let env = Env::new();
    let want = res64(&Env::new(), &["20011", "--spot", "off"]);
    let dir = two_saves(&env);
    rewrite_state(&dir.join("state.cbor"), |s| s.residue[5] ^= 0x10);
    let o = env.prove(&["20011", "--spot", "off", "--ll-check", "jacobi"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("does not match the hash its checkpoint chain holds"), "{}", stderr(&o));
    assert_eq!(json(&o)["res64"], want.as_str());
}

/// A save that is wrong but consistent with its own chain (residue and stored hash changed
/// together) passes the checks on load when its Jacobi symbol is right; the check after it then
/// fails every time the run rolls back to it. The run gives that save up for the previous one.
#[test]
fn a_loaded_state_that_fails_consistently_falls_back_to_the_previous_save() {
    use mersenne_cert::residue::Residue;
    use rug::Integer;
    let env = Env::new();
    let want = res64(&Env::new(), &["20011", "--spot", "off"]);
    let dir = two_saves(&env);
    rewrite_state(&dir.join("state.cbor"), |s| {
        let m = (Integer::from(1) << s.exponent) - 1u32;
        // The first flip whose residue x has (x−2 | M) = −1 (passes on load) and (x+2 | M) = −1,
        // so that (x²−4 | M) = +1: the next iteration's check fails.
        let x = (0..s.residue.len() * 8)
            .map(|bit| {
                let mut b = s.residue.to_vec();
                b[bit / 8] ^= 1 << (bit % 8);
                b
            })
            .filter_map(|b| Residue::from_bytes(s.exponent, &b).ok())
            .find(|x| {
                let v = x.to_integer();
                Integer::from(&v - 2u32).jacobi(&m) == -1 && Integer::from(&v + 2u32).jacobi(&m) == -1
            })
            .expect("a quarter of the flips qualify");
        s.residue = serde_bytes::ByteBuf::from(x.to_bytes());
        let k = s.iteration;
        s.chain.iter_mut().filter(|c| c.iteration == k).for_each(|c| c.hash = x.hash());
    });
    let o = env.prove(&["20011", "--spot", "off", "--ll-check", "jacobi"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("after resuming here; trying an older save"), "{}", stderr(&o));
    let j = json(&o);
    assert_eq!(j["res64"], want.as_str(), "{j}");
}

#[test]
fn no_usable_save_stops_naming_the_files() {
    let env = Env::new();
    let dir = two_saves(&env);
    for f in ["state.cbor", "state.prev.cbor"] {
        rewrite_state(&dir.join(f), |s| s.residue[3] ^= 1);
    }
    let o = env.prove(&["20011", "--spot", "off"]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("state.cbor, state.prev.cbor") && e.contains("--fresh"), "{e}");
}

#[test]
fn a_state_of_another_test_is_not_used() {
    let env = Env::new();
    let dir = two_saves(&env);
    for f in ["state.cbor", "state.prev.cbor"] {
        rewrite_state(&dir.join(f), |s| s.kind = TestKind::Prp);
    }
    let o = env.prove(&["20011", "--spot", "off"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("holds M20011 PRP-3, not M20011 LL"), "{}", stderr(&o));
}

#[test]
fn a_different_shift_is_refused_on_resume() {
    let env = Env::new();
    two_saves(&env);
    let o = env.prove(&["20011", "--spot", "off", "--shift", "8"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("saved with shift 7; asked: --shift 8"), "{}", stderr(&o));
}

#[test]
fn gerbicz_block_is_refused_for_ll() {
    let env = Env::new();
    let o = env.prove(&["9689", "--gerbicz-block", "100"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("--gerbicz-block is for PRP"), "{}", stderr(&o));
}

#[test]
fn a_second_prove_of_the_same_test_stops_at_once() {
    let env = Env::new();
    std::fs::create_dir_all(env.path("state")).unwrap();
    let lock = std::fs::File::create(env.path("state").join("M20011-LL.lock")).unwrap();
    lock.try_lock().unwrap();
    let t = std::time::Instant::now();
    let o = env.prove(&["20011", "--spot", "off"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("another prove is running this test"), "{}", stderr(&o));
    assert!(t.elapsed().as_secs() < 5);
}
