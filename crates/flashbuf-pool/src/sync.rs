//! The pool's synchronisation primitives in one place: the pool lock ([`Mutex`]), its
//! condition variable ([`Condvar`]), the frames' latches ([`Latch`]), the atomics of frame
//! headers and counters, and the pause of a thread that waits for a pin to go
//! ([`back_off`]).
//!
//! A normal build uses `parking_lot` and `std`. With the `shuttle` feature (tests only:
//! `cargo test -p flashbuf-pool --features shuttle --test pool_schedules`) the same types
//! are built on [shuttle](https://docs.rs/shuttle)'s, so that a test can run the pool's
//! protocol — pins, latches, the locked miss path's latch-free claim, write-backs in
//! flight, waits on the condition variable — under thousands of chosen thread schedules
//! (randomised and PCT) and replay a failing one from its seed. Nothing else differs
//! between the builds: the code that uses these types is the same.

#[cfg(not(feature = "shuttle"))]
mod imp {
    use parking_lot::lock_api::{GuardSend, RawRwLock as _, RawRwLockDowngrade as _};

    pub(crate) use parking_lot::{Condvar, Mutex, MutexGuard};
    pub(crate) use std::sync::atomic::{AtomicU16, AtomicU64};

    /// The `waited`-th pause of a thread waiting for other threads to unpin a frame: 63
    /// yields, then sleeps of 100 µs.
    pub(crate) fn back_off(waited: u32) {
        if waited < 64 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(std::time::Duration::from_micros(100));
        }
    }

    /// A frame's latch: a reader-writer lock without guards (the pin protocol says who
    /// unlocks; parking_lot's raw lock may be released from any thread).
    pub(crate) struct Latch(parking_lot::RawRwLock);

    impl Latch {
        pub(crate) const fn new() -> Self {
            Self(parking_lot::RawRwLock::INIT)
        }

        #[inline]
        pub(crate) fn lock_exclusive(&self) {
            // The guard token carries no state (parking_lot does not track owners).
            let _token = self.0.lock_exclusive();
        }

        #[inline]
        pub(crate) fn lock_shared(&self) {
            let _token = self.0.lock_shared();
        }

        /// # Safety
        /// The caller holds the latch exclusively.
        #[inline]
        pub(crate) unsafe fn unlock_exclusive(&self) {
            // SAFETY: per the contract.
            unsafe { self.0.unlock_exclusive(GuardSend::new()) }
        }

        /// # Safety
        /// The caller holds the latch shared.
        #[inline]
        pub(crate) unsafe fn unlock_shared(&self) {
            // SAFETY: per the contract.
            unsafe { self.0.unlock_shared(GuardSend::new()) }
        }

        #[inline]
        pub(crate) fn try_lock_exclusive(&self) -> bool {
            self.0.try_lock_exclusive().is_some()
        }

        #[inline]
        pub(crate) fn is_locked(&self) -> bool {
            self.0.is_locked()
        }

        /// # Safety
        /// The caller holds the latch exclusively.
        #[inline]
        pub(crate) unsafe fn downgrade(&self) {
            // SAFETY: per the contract.
            let _shared = unsafe { self.0.downgrade(GuardSend::new()) };
        }
    }
}

#[cfg(feature = "shuttle")]
mod imp {
    pub(crate) use shuttle::sync::atomic::{AtomicU16, AtomicU64};

    /// A pause is a yield to the scheduler (no real time passes in a schedule).
    pub(crate) fn back_off(_waited: u32) {
        shuttle::thread::yield_now();
    }

    /// parking_lot's interface (a guard from `lock`, `wait(&mut guard)`) over shuttle's
    /// mutex. Poisoning does not exist in parking_lot; a panic fails the test anyway.
    pub(crate) struct Mutex<T>(shuttle::sync::Mutex<T>);

    pub(crate) struct MutexGuard<'a, T>(Option<shuttle::sync::MutexGuard<'a, T>>);

    impl<T> Mutex<T> {
        pub(crate) fn new(value: T) -> Self {
            Self(shuttle::sync::Mutex::new(value))
        }

        pub(crate) fn lock(&self) -> MutexGuard<'_, T> {
            MutexGuard(Some(self.0.lock().unwrap_or_else(|e| e.into_inner())))
        }
    }

    impl<T> std::ops::Deref for MutexGuard<'_, T> {
        type Target = T;
        fn deref(&self) -> &T {
            self.0
                .as_deref()
                .unwrap_or_else(|| unreachable!("guard held"))
        }
    }

    impl<T> std::ops::DerefMut for MutexGuard<'_, T> {
        fn deref_mut(&mut self) -> &mut T {
            self.0
                .as_deref_mut()
                .unwrap_or_else(|| unreachable!("guard held"))
        }
    }

    pub(crate) struct Condvar(shuttle::sync::Condvar);

    impl Condvar {
        pub(crate) fn new() -> Self {
            Self(shuttle::sync::Condvar::new())
        }

        pub(crate) fn wait<T>(&self, g: &mut MutexGuard<'_, T>) {
            let inner = g.0.take().unwrap_or_else(|| unreachable!("guard held"));
            g.0 = Some(self.0.wait(inner).unwrap_or_else(|e| e.into_inner()));
        }

        pub(crate) fn notify_all(&self) {
            self.0.notify_all();
        }
    }

    /// Latch state: readers holding it, a writer holding it, writers waiting (a reader
    /// waits behind a waiting writer, as parking_lot's task-fair lock makes it).
    #[derive(Default)]
    struct State {
        readers: u32,
        writer: bool,
        writers_waiting: u32,
    }

    /// The latch as a state under a shuttle mutex, with a condition variable for waiters.
    pub(crate) struct Latch {
        state: shuttle::sync::Mutex<State>,
        changed: shuttle::sync::Condvar,
    }

    impl Latch {
        pub(crate) fn new() -> Self {
            Self {
                state: shuttle::sync::Mutex::new(State::default()),
                changed: shuttle::sync::Condvar::new(),
            }
        }

        fn state(&self) -> shuttle::sync::MutexGuard<'_, State> {
            self.state.lock().unwrap_or_else(|e| e.into_inner())
        }

        pub(crate) fn lock_exclusive(&self) {
            let mut s = self.state();
            s.writers_waiting += 1;
            while s.writer || s.readers > 0 {
                s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            s.writers_waiting -= 1;
            s.writer = true;
        }

        pub(crate) fn lock_shared(&self) {
            let mut s = self.state();
            while s.writer || s.writers_waiting > 0 {
                s = self.changed.wait(s).unwrap_or_else(|e| e.into_inner());
            }
            s.readers += 1;
        }

        /// # Safety
        /// The caller holds the latch exclusively.
        pub(crate) unsafe fn unlock_exclusive(&self) {
            let mut s = self.state();
            assert!(s.writer, "exclusive unlock of a latch not held exclusively");
            s.writer = false;
            self.changed.notify_all();
        }

        /// # Safety
        /// The caller holds the latch shared.
        pub(crate) unsafe fn unlock_shared(&self) {
            let mut s = self.state();
            assert!(s.readers > 0, "shared unlock of a latch not held shared");
            s.readers -= 1;
            self.changed.notify_all();
        }

        pub(crate) fn try_lock_exclusive(&self) -> bool {
            let mut s = self.state();
            let free = !s.writer && s.readers == 0;
            s.writer |= free;
            free
        }

        pub(crate) fn is_locked(&self) -> bool {
            let s = self.state();
            s.writer || s.readers > 0
        }

        /// # Safety
        /// The caller holds the latch exclusively.
        pub(crate) unsafe fn downgrade(&self) {
            let mut s = self.state();
            assert!(s.writer, "downgrade of a latch not held exclusively");
            s.writer = false;
            s.readers += 1;
            self.changed.notify_all();
        }
    }
}

pub(crate) use imp::*;
