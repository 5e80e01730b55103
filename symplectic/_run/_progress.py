"""Progress bars for long runs (``progress=True``).

:func:`symplectic.integrate`, :func:`symplectic.integrate_many` and
:func:`symplectic.reproduce.run` take ``progress=True``.  The bar is tqdm's
when tqdm is installed, otherwise one line on stderr rewritten in place
(``\\r``) at most every 0.2 s: done/total, percent, rate and time left.

Cost: nothing when off (no object, no call: the C loop's Ctrl-C check runs as
before).  When on, the C loop's periodic Ctrl-C check -- every 1 to 512
steps, about every 0.1 ms of work -- also calls :meth:`Bar.report`, which
does one subtraction and one clock read unless a redraw is due
(section 15 of ``benchmarks/RESULTS.md`` measures the overhead on 10^7 steps).
"""
import sys
import threading
import time

#: Seconds between redraws of the plain stderr line.
PLAIN_INTERVAL = 0.2


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm


class Bar:
    """A progress bar over ``total`` units (steps, members, tasks).

    ``report(done, source)`` sets the units done by one source (the C loop
    reports the steps of its run; each ensemble member is a source);
    ``advance(k)`` adds units; ``close()`` draws the final state.  A report
    stores one number and reads the clock; the bar is redrawn at most every
    ``interval`` seconds.  Safe to call from several threads (reports hold
    the GIL; a dict item assignment is atomic).
    """

    def __init__(self, total, desc, unit="step", stream=None, plain=None,
                 interval=PLAIN_INTERVAL):
        self.total = max(int(total), 0)
        self.desc = desc
        self.unit = unit
        self.interval = interval
        self._parts = {}
        self._extra = 0
        self._lock = threading.Lock()
        self._start = time.perf_counter()
        self._next_draw = self._start + interval
        self._stream = stream if stream is not None else sys.stderr
        tqdm = None if plain else _tqdm()
        self._tqdm = (tqdm(total=self.total, desc=desc, unit=unit, unit_scale=True,
                           file=self._stream, dynamic_ncols=True, leave=True, mininterval=interval)
                      if tqdm is not None else None)
        self._closed = False

    @property
    def done(self):
        return sum(self._parts.values()) + self._extra

    # ---------------------------------------------------------------- updates
    def report(self, done, source=0):
        """Units done so far by ``source`` (the C loop's callback)."""
        self._parts[source] = done
        if time.perf_counter() >= self._next_draw:
            self._redraw()

    def advance(self, k=1):
        with self._lock:
            self._extra += k
        self._redraw()

    def _redraw(self, end=""):
        with self._lock:
            now = time.perf_counter()
            self._next_draw = now + self.interval
            done = self.done
            if self._tqdm is not None:
                if done > self._tqdm.n:
                    self._tqdm.update(done - self._tqdm.n)
            else:
                self._draw(now, done, end)

    def close(self):
        if self._closed:
            return
        self._closed = True
        self._redraw(end="\n")
        if self._tqdm is not None:
            self._tqdm.close()

    # ---------------------------------------------------------------- plain line
    def line(self, now=None, done=None):
        """The plain progress line: desc, done/total, percent, rate, time left."""
        now = time.perf_counter() if now is None else now
        done = self.done if done is None else done
        el = max(now - self._start, 1e-9)
        rate = done / el
        frac = done / self.total if self.total else 1.0
        left = (self.total - done) / rate if rate > 0 else float("inf")
        return (f"{self.desc}: {100 * frac:5.1f}% {done:.4g}/{self.total:.4g} {self.unit}s, "
                f"{rate:.3g} {self.unit}s/s, elapsed {_clock(el)}, left {_clock(left)}")

    def _draw(self, now, done, end):
        try:
            self._stream.write("\r" + self.line(now, done) + end)
            self._stream.flush()
        except (OSError, ValueError):      # a closed stream: progress is not worth failing for
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


def _clock(seconds):
    if seconds != seconds or seconds == float("inf"):
        return "?"
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def bar(progress, total, desc, unit="step"):
    """A :class:`Bar` when ``progress`` is true, else None (nothing runs)."""
    return Bar(total, desc, unit) if progress else None
