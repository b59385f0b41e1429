//! How a balancer holds and moves a rank's items: a `Vec` of the application's [`Item`]s, or
//! a flat buffer of fixed-size byte records ([`Records`]).
//!
//! The protocol never looks inside an item: it asks a [`Store`] for the items' loads, copies
//! runs of them into *chunks* (what one message carries), keeps the chunks it receives apart,
//! and at the end of a call either commits (the sent originals leave the store, the received
//! chunks join it) or rolls back (the received chunks are dropped). A `Vec<T>` moves chunks of
//! `Vec<T>` (serialised item by item with serde); records move chunks of raw bytes — one
//! copy into the message, one out of it, no allocation per record — which is what the C
//! interface and other foreign callers use.
//!
//! # Records from a foreign caller
//! A caller whose records live in memory it allocated itself (a C `malloc`'ed array, a
//! NumPy array) keeps them there:
//!
//! 1. implement [`RecordBuffer`] over that memory: [`RecordBuffer::bytes`] and
//!    [`RecordBuffer::bytes_mut`] view the records held, [`RecordBuffer::reserve_total`] grows
//!    the allocation (`realloc`) and is the only step allowed to fail — the balancer calls it
//!    before it votes, so a rank that cannot grow gives the call up and every rank rolls back —
//!    and [`RecordBuffer::truncate`] and [`RecordBuffer::extend_from_slice`] only move the
//!    length within the room reserved;
//! 2. wrap it: `Records::new(&mut buffer, record_size, id_offset)`, then
//!    [`Records::with_loads`] when records do not all weigh one unit;
//! 3. call [`Balancer::rebalance`](super::Balancer::rebalance) on a
//!    `Balancer<Bytes, _>` (or `plan` then `migrate`), collectively;
//! 4. after the call (success or failure) the buffer's length says how many records this rank
//!    holds: its kept records first, in their order, then the ones received.
//!
//! `hetlb-capi`'s `hetlb_rebalance` is this sequence over a `malloc`'ed array.

use super::item::Item;
use super::locality::Position;
use hetlb_transport::Message;
use serde::de::{self, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::ops::Range;
use thiserror::Error;

/// Items per message at most: a larger transfer goes in several messages (the last one marked
/// `last`), which bounds the size of one MPI message and lets a receiver start forwarding.
pub(crate) const MAX_ITEMS_PER_MESSAGE: usize = 1 << 16;

/// The largest chunk of records, in bytes, that one message carries (a larger transfer goes in
/// several messages).
pub(crate) const MAX_CHUNK_BYTES: usize = 4 << 20;

/// What kind of items a [`Balancer`](super::Balancer) moves: any [`Item`] type (moved in a
/// `Vec`), or [`Bytes`] (fixed-size byte records, [`Records`]). It fixes the balancer's
/// message type; sealed.
pub trait ItemKind: sealed::Sealed + 'static {
    /// A run of items as one message carries it.
    type Chunk: Message;
}

impl<T: Item> ItemKind for T {
    type Chunk = Vec<T>;
}

/// The item kind of a balancer that moves byte records ([`Records`]): records of a size fixed
/// at run time, each carried as plain bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bytes;

impl ItemKind for Bytes {
    type Chunk = ByteChunk;
}

mod sealed {
    pub trait Sealed {}
    impl<T: super::Item> Sealed for T {}
    impl Sealed for super::Bytes {}
}

/// Where a rank keeps the items a [`Balancer`](super::Balancer) of kind `K` moves: a
/// `Vec<T>` of the application's [`Item`]s (`K = T`), or [`Records`], fixed-size byte
/// records in one buffer (`K = Bytes`). Every call of the balancer takes either; both run
/// the same protocol with the same guarantees. Sealed.
pub trait Storage<K: ItemKind>: Store<Chunk = K::Chunk> {}

impl<T: Item> Storage<T> for Vec<T> {}

impl<B: RecordBuffer + ?Sized> Storage<Bytes> for Records<'_, B> {}

/// A run of byte records as one message carries it: the record size and the records' bytes
/// end to end (serialised as one byte string, so moving it costs a copy, not a loop over the
/// records).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ByteChunk {
    size: usize,
    bytes: Vec<u8>,
}

impl ByteChunk {
    fn len(&self) -> usize {
        self.bytes.len().checked_div(self.size).unwrap_or(0)
    }

    fn record(&self, i: usize) -> &[u8] {
        &self.bytes[i * self.size..(i + 1) * self.size]
    }

    /// Bytes that are not records (a part of [`crate::Balancer::exchange_bytes`]), carried
    /// as one byte string.
    pub(crate) fn raw(bytes: Vec<u8>) -> Self {
        Self { size: 1, bytes }
    }

    /// The bytes carried.
    pub(crate) fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

impl Serialize for ByteChunk {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        Self::serialize_parts(self.size, &self.bytes, s)
    }
}

impl ByteChunk {
    /// A chunk of records of `size` bytes held in `bytes`, serialised as the chunk would be.
    fn serialize_parts<S: Serializer>(size: usize, bytes: &[u8], s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut t = s.serialize_tuple(2)?;
        t.serialize_element(&(size as u64))?;
        t.serialize_element(&RawBytes(bytes))?;
        t.end()
    }
}

struct RawBytes<'a>(&'a [u8]);

impl Serialize for RawBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_bytes(self.0)
    }
}

struct OwnedBytes(Vec<u8>);

impl<'de> Deserialize<'de> for OwnedBytes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OwnedBytes;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a byte string")
            }
            fn visit_bytes<E: de::Error>(self, v: &[u8]) -> Result<OwnedBytes, E> {
                Ok(OwnedBytes(v.to_vec()))
            }
            fn visit_byte_buf<E: de::Error>(self, v: Vec<u8>) -> Result<OwnedBytes, E> {
                Ok(OwnedBytes(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<OwnedBytes, A::Error> {
                let mut v = Vec::new();
                while let Some(b) = a.next_element::<u8>()? {
                    v.push(b);
                }
                Ok(OwnedBytes(v))
            }
        }
        d.deserialize_byte_buf(V)
    }
}

impl<'de> Deserialize<'de> for ByteChunk {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let (size, bytes) = <(u64, OwnedBytes)>::deserialize(d)?;
        let size = usize::try_from(size).map_err(de::Error::custom)?;
        Ok(Self {
            size,
            bytes: bytes.0,
        })
    }
}

/// A rank's items as the protocol sees them (see the module documentation). Implemented by
/// `Vec<T: Item>` and by [`Records`]. Public only as the sealed supertrait of [`Storage`]: it
/// cannot be named outside this crate.
pub trait Store {
    /// What one message carries.
    type Chunk: Message;

    /// Items held.
    fn len(&self) -> usize;
    /// The load of own item `i`.
    fn load(&self, i: usize) -> u64;
    /// True when every item (own or received) has one unit, known without asking each.
    fn unit_loads(&self) -> bool {
        false
    }
    /// Σ of the loads, `None` on overflow.
    fn units(&self) -> Option<u64> {
        if self.unit_loads() {
            return Some(self.len() as u64);
        }
        (0..self.len()).try_fold(0u64, |a, i| a.checked_add(self.load(i)))
    }
    /// A digest of what every rank's store must agree on (the record size).
    fn shape(&self) -> u64 {
        0
    }
    /// Where own item `i` lives (see [`Item::position`]).
    fn position(&self, i: usize) -> Option<Position> {
        let _ = i;
        None
    }
    /// Where item `i` of a chunk lives.
    fn chunk_position(&self, c: &Self::Chunk, i: usize) -> Option<Position> {
        let _ = (c, i);
        None
    }
    /// The most items one chunk should carry.
    fn max_chunk_items(&self) -> usize;
    /// Why a received chunk cannot belong to this store, if it cannot.
    fn check_chunk(&self, c: &Self::Chunk) -> Result<(), String> {
        let _ = c;
        Ok(())
    }
    /// Items in a chunk.
    fn chunk_len(&self, c: &Self::Chunk) -> usize;
    /// The load of item `i` of a chunk.
    fn chunk_load(&self, c: &Self::Chunk, i: usize) -> u64;
    /// An empty chunk.
    fn new_chunk(&self) -> Self::Chunk;
    /// A copy of own items `range`, as a chunk.
    fn copy_range(&self, range: Range<usize>) -> Self::Chunk;
    /// Own items `range` serialised exactly as the chunk [`Store::copy_range`] makes of
    /// them, without the copy (for a backend that serialises what it sends).
    ///
    /// # Errors
    /// The serializer's.
    fn serialize_range<Z: Serializer>(&self, range: Range<usize>, s: Z) -> Result<Z::Ok, Z::Error> {
        self.copy_range(range).serialize(s)
    }
    /// Appends a copy of own item `i` to `c`.
    fn push_own(&self, c: &mut Self::Chunk, i: usize);
    /// Appends a copy of item `i` of `from` to `to`.
    fn push_from(&self, to: &mut Self::Chunk, from: &Self::Chunk, i: usize);
    /// Splits `c` at `at`: `c` keeps `[..at]`, the rest is returned.
    fn split_chunk(&self, c: &mut Self::Chunk, at: usize) -> Self::Chunk;
    /// Makes room for `total` items in all; nothing else may fail when committing.
    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError>;
    /// Keeps the first `len` own items.
    fn truncate(&mut self, len: usize);
    /// Removes own items `i` with `gone[i]`, keeping the others in order.
    fn remove_marked(&mut self, gone: &[bool]);
    /// Removes own items `i` with `gone[i]` and returns them as a chunk.
    fn take_marked(&mut self, gone: &[bool]) -> Self::Chunk;
    /// Appends a chunk (after [`Store::reserve_total`]).
    fn append(&mut self, c: Self::Chunk);
}

/// A store that could not grow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Memory for the items could not be had.
    #[error("cannot make room for {items} items of {bytes_each} bytes: {reason}")]
    NoRoom {
        /// Items the store had to hold.
        items: usize,
        /// Bytes per item (in memory).
        bytes_each: usize,
        /// What the allocator said.
        reason: String,
    },
    /// Items of another shape (records of another size) cannot join the store.
    #[error("{0}")]
    Mismatch(String),
}

impl<T: Item> Store for Vec<T> {
    type Chunk = Vec<T>;

    fn position(&self, i: usize) -> Option<Position> {
        self[i].position()
    }
    fn chunk_position(&self, c: &Vec<T>, i: usize) -> Option<Position> {
        c[i].position()
    }
    fn len(&self) -> usize {
        Vec::len(self)
    }
    fn load(&self, i: usize) -> u64 {
        self[i].load()
    }
    fn max_chunk_items(&self) -> usize {
        MAX_ITEMS_PER_MESSAGE
    }
    fn chunk_len(&self, c: &Vec<T>) -> usize {
        c.len()
    }
    fn chunk_load(&self, c: &Vec<T>, i: usize) -> u64 {
        c[i].load()
    }
    fn new_chunk(&self) -> Vec<T> {
        Vec::new()
    }
    fn copy_range(&self, range: Range<usize>) -> Vec<T> {
        self[range].to_vec()
    }
    fn serialize_range<Z: Serializer>(&self, range: Range<usize>, s: Z) -> Result<Z::Ok, Z::Error> {
        // a slice serialises as the vector `copy_range` makes
        self[range].serialize(s)
    }
    fn push_own(&self, c: &mut Vec<T>, i: usize) {
        c.push(self[i].clone());
    }
    fn push_from(&self, to: &mut Vec<T>, from: &Vec<T>, i: usize) {
        to.push(from[i].clone());
    }
    fn split_chunk(&self, c: &mut Vec<T>, at: usize) -> Vec<T> {
        c.split_off(at)
    }
    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError> {
        self.try_reserve(total.saturating_sub(Vec::len(self)))
            .map_err(|e| StoreError::NoRoom {
                items: total,
                bytes_each: std::mem::size_of::<T>(),
                reason: e.to_string(),
            })
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    fn remove_marked(&mut self, gone: &[bool]) {
        let mut i = 0;
        self.retain(|_| {
            let keep = !gone.get(i).copied().unwrap_or(false);
            i += 1;
            keep
        });
    }
    fn take_marked(&mut self, gone: &[bool]) -> Vec<T> {
        let mut taken = Vec::new();
        let mut kept = Vec::with_capacity(Vec::len(self));
        for (i, it) in self.drain(..).enumerate() {
            if gone.get(i).copied().unwrap_or(false) {
                taken.push(it);
            } else {
                kept.push(it);
            }
        }
        *self = kept;
        taken
    }
    fn append(&mut self, c: Vec<T>) {
        self.extend(c);
    }
}

/// A growable run of bytes that [`Records`] keeps its records in: a `Vec<u8>`, or memory a
/// foreign caller owns (the C interface implements it over a `malloc`'ed array).
pub trait RecordBuffer {
    /// The bytes held.
    fn bytes(&self) -> &[u8];
    /// The bytes held, to change in place.
    fn bytes_mut(&mut self) -> &mut [u8];
    /// Makes room for `total` bytes in all. After it succeeds, extending up to that length
    /// must not fail.
    ///
    /// # Errors
    /// [`StoreError::NoRoom`] when the memory cannot be had (the buffer is unchanged).
    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError>;
    /// Keeps the first `len` bytes.
    fn truncate(&mut self, len: usize);
    /// Appends `bytes` (within the room made by [`RecordBuffer::reserve_total`]).
    fn extend_from_slice(&mut self, bytes: &[u8]);
}

impl RecordBuffer for Vec<u8> {
    fn bytes(&self) -> &[u8] {
        self
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        self
    }
    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError> {
        self.try_reserve(total.saturating_sub(self.len()))
            .map_err(|e| StoreError::NoRoom {
                items: total,
                bytes_each: 1,
                reason: e.to_string(),
            })
    }
    fn truncate(&mut self, len: usize) {
        Vec::truncate(self, len);
    }
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
}

/// Why a set of records cannot be balanced.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[non_exhaustive]
pub enum RecordError {
    /// Records of zero bytes.
    #[error("item_size: records must have at least one byte")]
    ZeroSize,
    /// The id does not fit in the record.
    #[error(
        "id_offset: a u64 id at byte {id_offset} does not fit in records of {size} bytes \
         (id_offset + 8 must be at most the record size)"
    )]
    IdOutOfRange {
        /// The offset given.
        id_offset: usize,
        /// The record size.
        size: usize,
    },
    /// The buffer does not hold a whole number of records.
    #[error("the buffer holds {bytes} bytes, not a whole number of {size}-byte records")]
    Ragged {
        /// Bytes in the buffer.
        bytes: usize,
        /// The record size.
        size: usize,
    },
    /// A record larger than a message can carry.
    #[error("item_size: records of {0} bytes are larger than a message can carry (2 GiB)")]
    TooLarge(usize),
    /// Coordinates that do not fit the record, or a dimension outside 1 to 3.
    #[error(
        "coords: {dim} coordinates of 8 bytes at byte {offset} do not fit records of {size} \
         bytes (1 to 3 coordinates, offset + 8 × dim at most the record size)"
    )]
    Positions {
        /// The offset given.
        offset: usize,
        /// The dimension given.
        dim: usize,
        /// The record size.
        size: usize,
    },
}

/// The load of a record, from its bytes.
pub type LoadFn<'a> = &'a dyn Fn(&[u8]) -> u64;

/// A rank's items as fixed-size byte records in one buffer, end to end: what
/// [`Balancer::rebalance`](super::Balancer::rebalance) moves. Each record
/// carries a `u64` id (native byte order) at a fixed offset, used by checks
/// ([`Records::id`]), never for routing; its load is 1 unless a load function says otherwise.
///
/// Records move as plain bytes: one copy into a message and one out of it, no allocation per
/// record, whatever their size.
///
/// # Example
/// ```
/// use hetlb_peer::Records;
/// let mut buffer: Vec<u8> = (0u64..4).flat_map(|id| [id, 10 * id]).flat_map(u64::to_ne_bytes).collect();
/// let records = Records::new(&mut buffer, 16, 0).unwrap();
/// assert_eq!(records.len(), 4);
/// assert_eq!(records.id(2), 2);
/// let weigh = |r: &[u8]| u64::from_ne_bytes(r[8..16].try_into().unwrap());
/// let weighted = Records::new(&mut buffer, 16, 0).unwrap().with_loads(&weigh);
/// assert_eq!(weighted.load(3), 30);
/// ```
pub struct Records<'a, B: RecordBuffer + ?Sized = Vec<u8>> {
    buffer: &'a mut B,
    size: usize,
    id_offset: usize,
    load: Option<LoadFn<'a>>,
    /// `(offset, dim)`: `dim` native-endian `f64` coordinates at byte `offset`.
    positions: Option<(usize, usize)>,
}

impl<B: RecordBuffer + ?Sized> std::fmt::Debug for Records<'_, B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Records")
            .field("len", &self.len())
            .field("size", &self.size)
            .field("id_offset", &self.id_offset)
            .field("weighted", &self.load.is_some())
            .field("positions", &self.positions)
            .finish()
    }
}

impl<'a, B: RecordBuffer + ?Sized> Records<'a, B> {
    /// Records of `size` bytes held end to end in `buffer`, each with a `u64` id at byte
    /// `id_offset`.
    ///
    /// # Errors
    /// [`RecordError`] for a zero size, an id that does not fit, a buffer that does not hold
    /// a whole number of records, or records too large for a message.
    pub fn new(buffer: &'a mut B, size: usize, id_offset: usize) -> Result<Self, RecordError> {
        if size == 0 {
            return Err(RecordError::ZeroSize);
        }
        if size > i32::MAX as usize / 2 {
            return Err(RecordError::TooLarge(size));
        }
        if id_offset.checked_add(8).is_none_or(|end| end > size) {
            return Err(RecordError::IdOutOfRange { id_offset, size });
        }
        let bytes = buffer.bytes().len();
        if !bytes.is_multiple_of(size) {
            return Err(RecordError::Ragged { bytes, size });
        }
        Ok(Self {
            buffer,
            size,
            id_offset,
            load: None,
            positions: None,
        })
    }

    /// Records that carry their position: `dim` (1 to 3) native-endian `f64` coordinates at
    /// byte `offset` of each record (see [`Item::position`]). Every rank must read positions
    /// alike (the ranks check it).
    ///
    /// # Errors
    /// [`RecordError::Positions`] for a `dim` outside 1 to 3 or coordinates past the record.
    pub fn with_positions(mut self, offset: usize, dim: usize) -> Result<Self, RecordError> {
        let fits = dim
            .checked_mul(8)
            .and_then(|b| b.checked_add(offset))
            .is_some_and(|end| end <= self.size);
        if !(1..=3).contains(&dim) || !fits {
            return Err(RecordError::Positions {
                offset,
                dim,
                size: self.size,
            });
        }
        self.positions = Some((offset, dim));
        Ok(self)
    }

    /// The digest every rank's records must agree on: their size and where their positions
    /// are (`Some((offset, dim))`, as given to [`Records::with_positions`]). What a
    /// [`crate::Deferred`] description of records gives as its shape.
    ///
    /// # Example
    /// ```
    /// use hetlb_peer::Records;
    /// assert_eq!(Records::<Vec<u8>>::shape_of(64, None), 64);
    /// assert_ne!(Records::<Vec<u8>>::shape_of(64, Some((24, 3))), 64);
    /// ```
    pub fn shape_of(size: usize, positions: Option<(usize, usize)>) -> u64 {
        let (offset, dim) = positions.map_or((0, 0), |(o, d)| (o as u64 + 1, d as u64));
        (size as u64) ^ offset.rotate_left(24) ^ dim.rotate_left(56)
    }

    fn position_of(&self, record: &[u8]) -> Option<Position> {
        let (offset, dim) = self.positions?;
        let mut p = [0.0; 3];
        for (k, x) in p.iter_mut().enumerate().take(dim) {
            let at = offset + 8 * k;
            let mut b = [0u8; 8];
            b.copy_from_slice(&record[at..at + 8]);
            *x = f64::from_ne_bytes(b);
        }
        Some(p)
    }

    /// Weighs every record with `load` (default: one unit per record). The function must give
    /// a record the same load on every rank.
    #[must_use]
    pub fn with_loads(mut self, load: LoadFn<'a>) -> Self {
        self.load = Some(load);
        self
    }

    /// Records held.
    pub fn len(&self) -> usize {
        self.buffer.bytes().len() / self.size
    }

    /// True when no record is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes per record.
    pub fn record_size(&self) -> usize {
        self.size
    }

    /// Record `i`'s bytes.
    ///
    /// # Panics
    /// When `i` is not below [`Records::len`].
    pub fn record(&self, i: usize) -> &[u8] {
        &self.buffer.bytes()[i * self.size..(i + 1) * self.size]
    }

    /// The bytes of records `range`.
    fn range_bytes(&self, range: Range<usize>) -> &[u8] {
        &self.buffer.bytes()[range.start * self.size..range.end * self.size]
    }

    /// Record `i`'s id.
    ///
    /// # Panics
    /// When `i` is not below [`Records::len`].
    pub fn id(&self, i: usize) -> u64 {
        let r = self.record(i);
        let mut id = [0u8; 8];
        id.copy_from_slice(&r[self.id_offset..self.id_offset + 8]);
        u64::from_ne_bytes(id)
    }

    /// Record `i`'s load.
    ///
    /// # Panics
    /// When `i` is not below [`Records::len`].
    pub fn load(&self, i: usize) -> u64 {
        self.weigh(self.record(i))
    }

    fn weigh(&self, record: &[u8]) -> u64 {
        self.load.map_or(1, |f| f(record))
    }
}

impl<B: RecordBuffer + ?Sized> Store for Records<'_, B> {
    type Chunk = ByteChunk;

    fn len(&self) -> usize {
        Records::len(self)
    }
    fn load(&self, i: usize) -> u64 {
        Records::load(self, i)
    }
    fn unit_loads(&self) -> bool {
        self.load.is_none()
    }
    fn shape(&self) -> u64 {
        Records::<Vec<u8>>::shape_of(self.size, self.positions)
    }
    fn position(&self, i: usize) -> Option<Position> {
        self.position_of(self.record(i))
    }
    fn chunk_position(&self, c: &ByteChunk, i: usize) -> Option<Position> {
        self.position_of(c.record(i))
    }
    fn max_chunk_items(&self) -> usize {
        (MAX_CHUNK_BYTES / self.size).clamp(1, MAX_ITEMS_PER_MESSAGE)
    }
    fn check_chunk(&self, c: &ByteChunk) -> Result<(), String> {
        if c.size != self.size || !c.bytes.len().is_multiple_of(self.size) {
            return Err(format!(
                "records of {} bytes ({} bytes in all) arrived where records are {} bytes",
                c.size,
                c.bytes.len(),
                self.size
            ));
        }
        Ok(())
    }
    fn chunk_len(&self, c: &ByteChunk) -> usize {
        c.len()
    }
    fn chunk_load(&self, c: &ByteChunk, i: usize) -> u64 {
        self.weigh(c.record(i))
    }
    fn new_chunk(&self) -> ByteChunk {
        ByteChunk {
            size: self.size,
            bytes: Vec::new(),
        }
    }
    fn copy_range(&self, range: Range<usize>) -> ByteChunk {
        ByteChunk {
            size: self.size,
            bytes: self.range_bytes(range).to_vec(),
        }
    }
    fn serialize_range<Z: Serializer>(&self, range: Range<usize>, s: Z) -> Result<Z::Ok, Z::Error> {
        ByteChunk::serialize_parts(self.size, self.range_bytes(range), s)
    }
    fn push_own(&self, c: &mut ByteChunk, i: usize) {
        c.bytes.extend_from_slice(self.record(i));
    }
    fn push_from(&self, to: &mut ByteChunk, from: &ByteChunk, i: usize) {
        to.bytes.extend_from_slice(from.record(i));
    }
    fn split_chunk(&self, c: &mut ByteChunk, at: usize) -> ByteChunk {
        ByteChunk {
            size: c.size,
            bytes: c.bytes.split_off((at * c.size).min(c.bytes.len())),
        }
    }
    fn reserve_total(&mut self, total: usize) -> Result<(), StoreError> {
        let bytes = total.checked_mul(self.size).ok_or(StoreError::NoRoom {
            items: total,
            bytes_each: self.size,
            reason: "the size overflows".into(),
        })?;
        self.buffer.reserve_total(bytes).map_err(|e| match e {
            StoreError::NoRoom { reason, .. } => StoreError::NoRoom {
                items: total,
                bytes_each: self.size,
                reason,
            },
            other => other,
        })
    }
    fn truncate(&mut self, len: usize) {
        self.buffer.truncate(len * self.size);
    }
    fn remove_marked(&mut self, gone: &[bool]) {
        let size = self.size;
        let n = Records::len(self);
        let bytes = self.buffer.bytes_mut();
        let mut kept = 0;
        for i in 0..n {
            if !gone.get(i).copied().unwrap_or(false) {
                if kept != i {
                    bytes.copy_within(i * size..(i + 1) * size, kept * size);
                }
                kept += 1;
            }
        }
        self.buffer.truncate(kept * size);
    }
    fn take_marked(&mut self, gone: &[bool]) -> ByteChunk {
        let mut taken = self.new_chunk();
        for i in (0..Records::len(self)).filter(|&i| gone.get(i).copied().unwrap_or(false)) {
            taken.bytes.extend_from_slice(self.record(i));
        }
        self.remove_marked(gone);
        taken
    }
    fn append(&mut self, c: ByteChunk) {
        self.buffer.extend_from_slice(&c.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(ids: std::ops::Range<u64>) -> Vec<u8> {
        ids.flat_map(|id| [id, id * 3])
            .flat_map(u64::to_ne_bytes)
            .collect()
    }

    #[test]
    fn byte_chunks_travel_as_one_byte_string() {
        let c = ByteChunk {
            size: 16,
            bytes: buffer(0..1000),
        };
        let wire = postcard::to_allocvec(&c).unwrap();
        // The size, the length and the bytes: no per-record framing.
        assert!(wire.len() <= c.bytes.len() + 8, "{}", wire.len());
        let back: ByteChunk = postcard::from_bytes(&wire).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn bad_shapes_are_refused() {
        let mut b = buffer(0..3);
        assert_eq!(
            Records::new(&mut b, 0, 0).unwrap_err(),
            RecordError::ZeroSize
        );
        assert!(matches!(
            Records::new(&mut b, 16, 9),
            Err(RecordError::IdOutOfRange { .. })
        ));
        assert!(matches!(
            Records::new(&mut b, 16, usize::MAX),
            Err(RecordError::IdOutOfRange { .. })
        ));
        assert!(matches!(
            Records::new(&mut b, 10, 0),
            Err(RecordError::Ragged { .. })
        ));
        assert!(Records::new(&mut b, 16, 8).is_ok());
    }

    #[test]
    fn records_copy_split_remove_and_append() {
        let mut b = buffer(0..6);
        let mut r = Records::new(&mut b, 16, 0).unwrap();
        let mut c = r.copy_range(2..5);
        assert_eq!(r.chunk_len(&c), 3);
        let tail = r.split_chunk(&mut c, 1);
        assert_eq!((r.chunk_len(&c), r.chunk_len(&tail)), (1, 2));
        let gone = [true, false, true, false, false, true];
        let taken = r.take_marked(&gone);
        assert_eq!(r.chunk_len(&taken), 3);
        assert_eq!((0..r.len()).map(|i| r.id(i)).collect::<Vec<_>>(), [1, 3, 4]);
        r.reserve_total(6).unwrap();
        r.append(tail);
        assert_eq!(
            (0..r.len()).map(|i| r.id(i)).collect::<Vec<_>>(),
            [1, 3, 4, 3, 4]
        );
        assert!(r.check_chunk(&taken).is_ok());
        let other = ByteChunk {
            size: 8,
            bytes: vec![0; 16],
        };
        assert!(r.check_chunk(&other).is_err());
    }
}
