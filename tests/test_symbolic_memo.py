"""fluidnet.symbolic.memo.trim_oldest: a model's bounded memos keep their newest entries, and
dropping the oldest does not fail where another thread (a sweep on a thread pool shares the
model) dropped it or changed the dictionary in between; the interleavings are made here by
dictionaries that act as the other thread does."""

from __future__ import annotations

from fluidnet.symbolic.memo import trim_oldest


def test_the_newest_entries_are_kept():
    memo = {k: k * k for k in range(10)}
    memo[3] = memo.pop(3)  # 3 is now the newest
    trim_oldest(memo, 4)
    assert list(memo) == [7, 8, 9, 3]
    trim_oldest(memo, 10)
    assert list(memo) == [7, 8, 9, 3]
    trim_oldest(memo, 0)
    assert memo == {}


class _DroppedMeanwhile(dict):
    """The oldest key is read, then another thread drops it before this one does (once)."""

    raced = False

    def __iter__(self):
        if self.raced:
            return super().__iter__()
        self.raced = True
        key = next(super().__iter__())
        super().pop(key)  # the other thread
        return iter([key])


class _ChangedMeanwhile(dict):
    """The first look for the oldest key meets a dictionary another thread is changing."""

    looked = 0

    def __iter__(self):
        self.looked += 1
        if self.looked == 1:
            raise RuntimeError("dictionary changed size during iteration")
        return super().__iter__()


def test_an_entry_another_thread_dropped_is_no_error():
    memo = _DroppedMeanwhile((k, None) for k in range(6))
    trim_oldest(memo, 2)  # memo.pop(next(iter(memo))) raised KeyError here
    assert memo.raced and list(dict.keys(memo)) == [4, 5]


def test_a_dictionary_another_thread_changed_is_looked_at_again():
    memo = _ChangedMeanwhile((k, None) for k in range(5))
    trim_oldest(memo, 3)
    assert memo.looked == 3 and list(dict.keys(memo)) == [2, 3, 4]
