//! An element budget for decoding: a serde [`Deserializer`] wrapper that counts the elements
//! of every sequence and map it reads and stops at a bound.
//!
//! A byte limit bounds what a decoder reads, not how often it loops: a sequence of
//! zero-sized elements (`Vec<()>`, a `Vec` of empty structs) reads no bytes per element,
//! so a length prefix of 2^64 − 1 from a peer (even an authenticated one: a bug, a flipped
//! bit) would keep [`crate::codec::decode`] busy for centuries. With the budget such a
//! message is an error after [`Counted::new`]'s bound is spent — milliseconds.
//!
//! The wrapper forwards every call to the decoder it wraps, and wraps what the decoder
//! hands back (visitors, sequence and map accesses, enum variants) so that nested
//! sequences count against the same budget.

use std::cell::Cell;
use std::fmt;

use serde::de::{
    self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, VariantAccess, Visitor,
};

/// A decoder whose sequences and maps may hold at most the budget's elements in all.
pub(crate) struct Counted<'b, D> {
    inner: D,
    left: &'b Cell<u64>,
}

impl<'b, D> Counted<'b, D> {
    /// `inner`, with `left` elements allowed in all its sequences and maps together.
    pub(crate) fn new(inner: D, left: &'b Cell<u64>) -> Self {
        Counted { inner, left }
    }
}

/// Take one element from the budget, or the error that it is spent.
fn spend<E: de::Error>(left: &Cell<u64>) -> Result<(), E> {
    match left.get() {
        0 => Err(E::custom(
            "more elements than the message can hold (a length prefix larger than the data; \
             the sender's value is corrupt)",
        )),
        n => {
            left.set(n - 1);
            Ok(())
        }
    }
}

/// A visitor, access or variant of the wrapped decoder, counting against the budget.
struct Wrap<'b, V> {
    inner: V,
    left: &'b Cell<u64>,
}

fn wrap<V>(inner: V, left: &Cell<u64>) -> Wrap<'_, V> {
    Wrap { inner, left }
}

struct Seed<'b, S> {
    inner: S,
    left: &'b Cell<u64>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Seed<'_, S> {
    type Value = S::Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.inner.deserialize(Counted::new(d, self.left))
    }
}

macro_rules! forward {
    ($($method:ident),*) => {$(
        fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method(wrap(visitor, self.left))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Counted<'_, D> {
    type Error = D::Error;

    forward!(
        deserialize_any,
        deserialize_bool,
        deserialize_i8,
        deserialize_i16,
        deserialize_i32,
        deserialize_i64,
        deserialize_i128,
        deserialize_u8,
        deserialize_u16,
        deserialize_u32,
        deserialize_u64,
        deserialize_u128,
        deserialize_f32,
        deserialize_f64,
        deserialize_char,
        deserialize_str,
        deserialize_string,
        deserialize_bytes,
        deserialize_byte_buf,
        deserialize_option,
        deserialize_unit,
        deserialize_seq,
        deserialize_map,
        deserialize_identifier,
        deserialize_ignored_any
    );

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_unit_struct(name, v)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_newtype_struct(name, v)
    }

    fn deserialize_tuple<V: Visitor<'de>>(
        self,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_tuple(len, v)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        len: usize,
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_tuple_struct(name, len, v)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_struct(name, fields, v)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        let v = wrap(visitor, self.left);
        self.inner.deserialize_enum(name, variants, v)
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

macro_rules! visit {
    ($($method:ident: $t:ty),*) => {$(
        fn $method<E: de::Error>(self, v: $t) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<'_, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    visit!(
        visit_bool: bool,
        visit_i8: i8,
        visit_i16: i16,
        visit_i32: i32,
        visit_i64: i64,
        visit_i128: i128,
        visit_u8: u8,
        visit_u16: u16,
        visit_u32: u32,
        visit_u64: u64,
        visit_u128: u128,
        visit_f32: f32,
        visit_f64: f64,
        visit_char: char,
        visit_str: &str,
        visit_borrowed_str: &'de str,
        visit_string: String,
        visit_bytes: &[u8],
        visit_borrowed_bytes: &'de [u8],
        visit_byte_buf: Vec<u8>
    );

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(Counted::new(d, self.left))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(Counted::new(d, self.left))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(wrap(seq, self.left))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(wrap(map, self.left))
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(wrap(data, self.left))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<'_, A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        spend(self.left)?;
        self.inner.next_element_seed(Seed {
            inner: seed,
            left: self.left,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Wrap<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        spend(self.left)?;
        self.inner.next_key_seed(Seed {
            inner: seed,
            left: self.left,
        })
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(Seed {
            inner: seed,
            left: self.left,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

impl<'de, 'b, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<'b, A> {
    type Error = A::Error;
    type Variant = Wrap<'b, A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Self::Variant), A::Error> {
        let left = self.left;
        let (value, variant) = self.inner.variant_seed(Seed { inner: seed, left })?;
        Ok((
            value,
            Wrap {
                inner: variant,
                left,
            },
        ))
    }
}

impl<'de, A: VariantAccess<'de>> VariantAccess<'de> for Wrap<'_, A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.inner.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.newtype_variant_seed(Seed {
            inner: seed,
            left: self.left,
        })
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.inner.tuple_variant(len, wrap(visitor, self.left))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.inner.struct_variant(fields, wrap(visitor, self.left))
    }
}
