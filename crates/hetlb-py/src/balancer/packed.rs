//! What the balancer moves for Python: an item packed as bytes (a pickled object, or one row
//! of a NumPy array) with its load, and an id that says where it came from.

use serde::{Deserialize, Serialize};

/// Bits of an id that hold the item's index on the rank that packed it.
const INDEX_BITS: u32 = 40;

/// One item as bytes.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Packed {
    /// `rank << 40 | index`: unique among the ranks' items of one call.
    pub id: u64,
    /// Load in integer units.
    pub load: u64,
    /// The item's bytes.
    #[serde(with = "bytes_field")]
    pub data: Vec<u8>,
    /// The item's position, when the caller gave coordinates (unused ones 0).
    pub at: Option<[f64; 3]>,
}

impl hetlb_peer::Item for Packed {
    fn id(&self) -> u64 {
        self.id
    }
    fn load(&self) -> u64 {
        self.load
    }
    fn position(&self) -> Option<[f64; 3]> {
        self.at
    }
}

/// The id of the `index`th item of `rank`.
pub fn id_of(rank: usize, index: usize) -> u64 {
    ((rank as u64) << INDEX_BITS) | index as u64
}

/// The index of an item `rank` packed itself, or `None` for an item from another rank.
pub fn own_index(rank: usize, id: u64) -> Option<usize> {
    (id >> INDEX_BITS == rank as u64).then_some((id & ((1 << INDEX_BITS) - 1)) as usize)
}

/// The most items one rank can pack in a call.
pub const MAX_ITEMS: usize = 1 << INDEX_BITS;

/// Bytes serialised as one byte string (not a sequence of numbers).
mod bytes_field {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &[u8], s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(v)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u8>, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Vec<u8>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
                Ok(v.to_vec())
            }
            fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
                Ok(v)
            }
        }
        d.deserialize_byte_buf(V)
    }
}
