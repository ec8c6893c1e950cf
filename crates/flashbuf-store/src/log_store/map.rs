//! The logical-to-physical map: one [`BlockAddr`] (4 bytes) per page id.

use super::layout::BlockAddr;

/// The map entry of a page never written.
const UNMAPPED: u32 = u32::MAX;

/// Page id → block address, 4 bytes per page.
#[derive(Debug, Clone)]
pub struct L2pMap {
    entries: Vec<u32>,
    mapped: u64,
}

impl L2pMap {
    /// A map of `pages` unmapped pages.
    pub fn new(pages: u64) -> Self {
        Self {
            entries: vec![UNMAPPED; pages as usize],
            mapped: 0,
        }
    }

    /// Page ids the map covers.
    pub fn pages(&self) -> u64 {
        self.entries.len() as u64
    }

    /// Pages mapped.
    pub fn mapped(&self) -> u64 {
        self.mapped
    }

    /// Where `pid` lives, if it was ever written (`None` also beyond the map).
    #[inline]
    pub fn get(&self, pid: u64) -> Option<BlockAddr> {
        match self.entries.get(pid as usize) {
            Some(&a) if a != UNMAPPED => Some(BlockAddr(a)),
            _ => None,
        }
    }

    /// Points `pid` at `addr` (in range); returns the previous address.
    #[inline]
    pub fn set(&mut self, pid: u64, addr: BlockAddr) -> Option<BlockAddr> {
        debug_assert_ne!(addr.0, UNMAPPED);
        let slot = &mut self.entries[pid as usize];
        let old = std::mem::replace(slot, addr.0);
        if old == UNMAPPED {
            self.mapped += 1;
            None
        } else {
            Some(BlockAddr(old))
        }
    }

    /// Every mapped page and its address.
    pub fn iter(&self) -> impl Iterator<Item = (u64, BlockAddr)> + '_ {
        self.entries
            .iter()
            .enumerate()
            .filter(|(_, &a)| a != UNMAPPED)
            .map(|(p, &a)| (p as u64, BlockAddr(a)))
    }

    /// Bytes of the map in memory.
    pub fn memory_bytes(&self) -> usize {
        self.entries.len() * std::mem::size_of::<u32>()
    }

    /// The map as little-endian bytes (the checkpoint's body).
    pub fn encode(&self, out: &mut Vec<u8>) {
        out.reserve(self.entries.len() * 4);
        for a in &self.entries {
            out.extend_from_slice(&a.to_le_bytes());
        }
    }

    /// A map from checkpoint bytes; every mapped entry must be below `total_blocks`.
    pub fn decode(b: &[u8], total_blocks: u64) -> Result<Self, String> {
        if !b.len().is_multiple_of(4) {
            return Err(format!("map of {} bytes is not whole entries", b.len()));
        }
        let mut entries = Vec::with_capacity(b.len() / 4);
        let mut mapped = 0;
        for (i, c) in b.chunks_exact(4).enumerate() {
            let a = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if a != UNMAPPED {
                if u64::from(a) >= total_blocks {
                    return Err(format!(
                        "page {i} mapped to block {a}, beyond the {total_blocks} blocks"
                    ));
                }
                mapped += 1;
            }
            entries.push(a);
        }
        Ok(Self { entries, mapped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_get_encode() {
        let mut m = L2pMap::new(4);
        assert_eq!(m.get(2), None);
        assert_eq!(m.get(99), None);
        assert_eq!(m.set(2, BlockAddr(7)), None);
        assert_eq!(m.set(2, BlockAddr(9)), Some(BlockAddr(7)));
        assert_eq!(m.mapped(), 1);
        let mut b = Vec::new();
        m.encode(&mut b);
        let d = L2pMap::decode(&b, 10).unwrap();
        assert_eq!(d.iter().collect::<Vec<_>>(), vec![(2, BlockAddr(9))]);
        assert!(L2pMap::decode(&b, 9).is_err());
        assert_eq!(m.memory_bytes(), 16);
    }
}
