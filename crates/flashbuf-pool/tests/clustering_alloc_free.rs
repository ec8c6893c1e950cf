#![allow(clippy::unwrap_used)]
//! Hot paths allocate nothing: after a warm-up, driving each policy (and the clustering
//! decorator in both modes) through hits, misses, evictions, cluster write-backs and
//! flushes performs no heap allocation. A counting global allocator watches this thread.

use flashbuf_core::{FrameId, PageId};
use flashbuf_pool::policy::{
    Access, Casa, Cfdc, Cflru, ClusterChoice, Clustered, ClusteringConfig, Lru, Policy, Victim,
};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

// SAFETY: forwards to the system allocator; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: same contract as the caller's.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCATIONS.with(|a| a.set(a.get() + 1));
        }
        // SAFETY: same contract as the caller's.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const PAGES: usize = 4096;

/// A minimal pool stand-in: page table, dirty flags, the policy's decisions carried out.
struct Driver<P> {
    policy: P,
    frame_of: Vec<u32>,
    page_of: Vec<u64>,
    dirty: Vec<bool>,
    free: Vec<u32>,
    batch: Vec<FrameId>,
}

impl<P: Policy> Driver<P> {
    fn new(policy: P) -> Self {
        let n = policy.frames_count();
        Self {
            policy,
            frame_of: vec![u32::MAX; PAGES],
            page_of: vec![0; n],
            dirty: vec![false; n],
            free: (0..n as u32).collect(),
            batch: Vec::with_capacity(n),
        }
    }

    fn access(&mut self, page: u64, write: bool) {
        let a = if write { Access::Write } else { Access::Read };
        let f = self.frame_of[page as usize];
        if f != u32::MAX {
            self.dirty[f as usize] |= write;
            self.policy.on_hit(FrameId(f), a);
            return;
        }
        let f = match self.free.pop() {
            Some(f) => FrameId(f),
            None => {
                self.batch.clear();
                let v = match self.policy.choose_victim(&|_| true).unwrap() {
                    Victim::Evict(v) => v,
                    Victim::Batch { evict, write_back } => {
                        self.batch.extend_from_slice(write_back);
                        evict
                    }
                };
                self.frame_of[self.page_of[v.index()] as usize] = u32::MAX;
                self.policy.on_remove(v);
                v
            }
        };
        self.frame_of[page as usize] = f.0;
        self.page_of[f.index()] = page;
        self.dirty[f.index()] = write;
        self.policy.on_insert(f, PageId(page), a);
        for i in 0..self.batch.len() {
            let m = self.batch[i];
            if m != f {
                self.dirty[m.index()] = false;
                self.policy.on_clean(m);
            }
        }
    }

    fn flush(&mut self) {
        for i in 0..self.dirty.len() {
            if self.dirty[i] {
                self.dirty[i] = false;
                self.policy.on_clean(FrameId(i as u32));
            }
        }
    }
}

fn run(policy: Box<dyn Policy>) -> u64 {
    let name = policy.name();
    let mut d = Driver::new(policy);
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut step = |d: &mut Driver<Box<dyn Policy>>, i: u64| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        // Pages from a few hot ranges and a cold tail; 30% writes; a flush now and then.
        let page = match x % 10 {
            0..=5 => (x >> 8) % 96,
            6..=8 => 1024 + (x >> 8) % 200,
            _ => (x >> 8) % PAGES as u64,
        };
        d.access(page, (x >> 40) % 10 < 3);
        if i % 5000 == 4999 {
            d.flush();
        }
    };
    for i in 0..50_000 {
        step(&mut d, i);
    }
    COUNTING.with(|c| c.set(true));
    for i in 0..100_000 {
        step(&mut d, i);
    }
    COUNTING.with(|c| c.set(false));
    d.policy.check_invariants().unwrap();
    let n = ALLOCATIONS.with(|a| a.replace(0));
    assert_eq!(n, 0, "{name} allocated {n} times");
    n
}

#[test]
fn no_allocation_on_hot_paths() {
    let frames = 160;
    let casa = || Casa::new(frames, 1.0, 20.0).unwrap();
    let policies: Vec<Box<dyn Policy>> = vec![
        Box::new(Lru::new(frames)),
        Box::new(Cflru::new(frames)),
        Box::new(Cfdc::new(frames)),
        Box::new(casa()),
        Box::new(Clustered::new(Lru::new(frames), ClusteringConfig::batch(64)).unwrap()),
        Box::new(Clustered::new(Cflru::new(frames), ClusteringConfig::drain(64)).unwrap()),
        Box::new(
            Clustered::new(
                casa(),
                ClusteringConfig::batch(16).with_choice(ClusterChoice::Metric),
            )
            .unwrap(),
        ),
        Box::new(
            Clustered::new(
                casa(),
                ClusteringConfig::drain(64).with_choice(ClusterChoice::Metric),
            )
            .unwrap(),
        ),
    ];
    for p in policies {
        run(p);
    }
}
