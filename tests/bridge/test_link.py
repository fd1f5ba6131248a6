"""Back-to-back tests of the link: a host-role Link against a device-role Link through fake
transports that chunk, drop, corrupt, delay and pause traffic."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import pytest

import firmware_bridge.link as link_mod
from firmware_bridge.codec import Flags, Frame, FrameDecoder, encode_frame
from firmware_bridge.endpoints import connector_for
from firmware_bridge.errors import LinkDown, SendFailed, TransportError
from firmware_bridge.link import (
    Link,
    LinkEvent,
    LinkLost,
    LinkPosition,
    LinkUp,
    Retained,
    Role,
    TableRebooted,
)
from firmware_bridge.messages import (
    SCHEMA_HASH,
    Ack,
    DiceRoll,
    Heartbeat,
    Hello,
    HelloReply,
    HelloStatus,
    Key,
    KeyPress,
    Message,
    SeatDisplay,
    SeatLamps,
    WallTake,
)
from firmware_bridge.testing import (
    FaultyConnector,
    FaultyTransport,
    collect_messages,
    link_pair,
    test_device_info,
)
from firmware_bridge.testing import next_status as _next_status
from firmware_bridge.transport import SimListener, Transport, transport_pair

_names = itertools.count()
S = TypeVar("S")


def commands(n: int) -> list[Message]:
    return [SeatDisplay(seat=i % 4, line1=f"cmd {i}", line2="x" * (i % 20)) for i in range(n)]


def events(n: int) -> list[Message]:
    return [WallTake(seat=i % 4, position=i % 136, tile=(i * 7) % 136) for i in range(n)]


async def collect(link: Link, n: int, seen: list[LinkEvent] | None = None) -> list[Message]:
    """The next ``n`` wire messages from ``link`` (status events go to ``seen``)."""
    return await collect_messages(link, n, seen)


async def next_status(link: Link, cls: type[S]) -> S:
    """Wait (5 s at most) for the next status event of type ``cls``, skipping the rest."""
    async with asyncio.timeout(5):
        return await _next_status(link, cls)


async def exchange(host: Link, device: Link, n: int) -> None:
    """Send n commands and n events concurrently; each side must get exactly n, in order."""
    cmds, evts = commands(n), events(n)

    async def send_all(link: Link, msgs: list[Message]) -> None:
        for m in msgs:
            await link.send(m)

    async with asyncio.timeout(30):
        got_cmds, got_evts, _, _ = await asyncio.gather(
            collect(device, n), collect(host, n), send_all(host, cmds), send_all(device, evts)
        )
    assert got_cmds == cmds
    assert got_evts == evts


@pytest.mark.usefixtures("lossless_timing")
async def test_clean_exchange_and_stats() -> None:
    async with link_pair() as (host, device):
        assert isinstance(host.peer, HelloReply) and host.peer.firmware_version == "sim-1.0"
        assert isinstance(device.peer, Hello)
        await exchange(host, device, 50)
        for link in (host, device):
            stats = link.stats
            assert stats.handshakes == 1 and stats.retransmits == 0 and stats.crc_errors == 0
            assert stats.frames_out >= 50 and stats.frames_in >= 50
            assert stats.as_dict()["duplicates_dropped"] == 0


@pytest.mark.usefixtures("patient_link")
@pytest.mark.parametrize("profile", ["clean", "drop_20"])
async def test_post_nowait_delivers_exactly_once_without_a_future(profile: str) -> None:
    # Fire-and-forget sends (displays, key events) still ride the reliable window: lost
    # frames are retransmitted and nothing is left waiting once everything is acked.
    faults = {} if profile == "clean" else {"drop": 0.2}
    async with link_pair(
        host_faults={"seed": 5, **faults}, device_faults={"seed": 6, **faults}
    ) as (host, device):
        cmds, evts = commands(40), events(40)
        for cmd, evt in zip(cmds, evts, strict=True):
            host.post_nowait(cmd)
            device.post_nowait(evt)
        async with asyncio.timeout(30):
            got_cmds, got_evts = await asyncio.gather(collect(device, 40), collect(host, 40))
        assert got_cmds == cmds and got_evts == evts
        with pytest.raises(TypeError):
            host.post_nowait(evts[0])  # a host sends commands only


FAULTS: dict[str, dict[str, Any]] = {
    "byte_at_a_time": {"byte_at_a_time": True},
    "drop_20": {"drop": 0.2},
    "bit_flips": {"flip": 0.1},
    "delay_jitter": {"delay": 0.004, "jitter": 0.01},
    "everything": {"drop": 0.2, "flip": 0.05, "delay": 0.002, "jitter": 0.004,
                   "byte_at_a_time": True},
}  # fmt: skip


@pytest.mark.usefixtures("patient_link")
@pytest.mark.parametrize("profile", list(FAULTS))
async def test_exactly_once_in_order_under_faults(
    profile: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What is checked here is delivery, not the give-up limit
    # (test_send_gives_up_after_max_retransmits has that). The link writes a whole
    # window in one write, so under "everything" a try of the head frame fails about 2
    # times in 5 (drop or flip of the write, or of the write carrying its ack), and on a
    # loaded machine a late ack also counts as a try: nine failed tries in a row happened
    # once in a CI run of the whole suite, and the link gave up. Out of reach here, as in
    # the test below.
    monkeypatch.setattr(link_mod, "MAX_RETRANSMITS", 30)
    faults = FAULTS[profile]
    async with link_pair(
        host_faults={"seed": 11, **faults}, device_faults={"seed": 22, **faults}
    ) as (host, device):
        await exchange(host, device, 60)
        if "drop" in faults or "flip" in faults:
            assert host.stats.retransmits + device.stats.retransmits > 0
        if "flip" in faults:
            assert host.stats.crc_errors + host.stats.framing_errors > 0
        assert host.stats.links_lost == 0 and device.stats.links_lost == 0


@pytest.mark.usefixtures("patient_link")
async def test_duplicates_are_dropped_when_acks_are_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The device loses 60% of what it writes (mostly acks): the host retransmits frames the
    # device already has, and the device must drop them.  At 60% loss nine attempts all
    # fail for about 1 event in 100, which would make the link give up: that limit has its
    # own test, so here it is set out of reach.
    monkeypatch.setattr(link_mod, "MAX_RETRANSMITS", 30)
    async with link_pair(device_faults={"seed": 5, "drop": 0.6}) as (host, device):
        await exchange(host, device, 30)
        assert device.stats.duplicates_dropped > 0


@pytest.mark.usefixtures("patient_link")
async def test_short_pause_holds_traffic_then_delivers() -> None:
    host_end, device_end = transport_pair()
    host_t = FaultyTransport(host_end)
    once = _once(host_t)
    device = Link(_once(device_end), role=Role.DEVICE, device_info=test_device_info())
    host = Link(once, role=Role.HOST)
    async with device, host:
        await host.wait_up()
        host_t.pause(drop=False)  # a stalled hub: shorter than LINK_TIMEOUT
        sending = asyncio.ensure_future(host.send(SeatLamps(0, dealer=True)))
        await asyncio.sleep(0.1)
        assert not sending.done()
        host_t.resume()
        async with asyncio.timeout(5):
            await sending
            assert await collect(device, 1) == [SeatLamps(0, dealer=True)]
        assert host.is_up and host.stats.links_lost == 0
    await host_t.close()


def _once(t: Transport) -> Callable[[], Any]:
    used = False

    async def connect() -> Transport:
        nonlocal used
        if used:
            raise TransportError("single-use test transport")
        used = True
        return t

    return connect


@contextlib.asynccontextmanager
async def sim_links(
    **host_faults: Any,
) -> AsyncIterator[tuple[Link, Link, FaultyConnector, SimListener]]:
    """Host and device links over sim://, reconnectable; host traffic through faults."""
    name = f"t{next(_names)}"
    with SimListener(name) as listener:
        connector = FaultyConnector(connector_for(f"sim://{name}"), **host_faults)
        device = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info())
        host = Link(connector, role=Role.HOST)
        async with device, host:
            async with asyncio.timeout(5):
                await host.wait_up()
            yield host, device, connector, listener


async def test_unplug_silence_reconnect_resumes_without_loss_or_duplicates() -> None:
    async with sim_links() as (host, device, connector, _):
        host_seen: list[LinkEvent] = []
        first = events(5)
        # device.send returns once the host has handled the event: consume alongside.
        got, *_ = await asyncio.gather(
            collect(host, 5, host_seen), *(device.send(e) for e in first)
        )
        assert got == first
        # Pull the cable: silence both ways on the current transport.
        assert connector.current is not None
        connector.current.pause(drop=True)
        connector.fail_next = 2  # the first reconnect attempts fail too
        pending = asyncio.ensure_future(host.send(DiceRoll()))
        # Events happening while unplugged are kept by the device...
        later = events(12)[5:]
        posted = [device.post(e) for e in later]
        async with asyncio.timeout(5):
            with pytest.raises(LinkDown, match="went down"):
                await pending
            # ...and delivered once after the reconnect, in order, none twice.
            assert await collect(host, len(later), host_seen) == later
            await asyncio.gather(*posted)
        kinds = [type(e) for e in host_seen]
        assert kinds[:1] == [LinkUp] and LinkLost in kinds and kinds[-1] is LinkUp
        assert not any(isinstance(e, TableRebooted) for e in host_seen)
        assert host.stats.reconnects >= 1 and host.stats.links_lost == 1
        # The device saw the host go silent (firmware stops motors here).
        assert isinstance(await next_status(device, LinkLost), LinkLost)
        await exchange(host, device, 10)


async def test_resume_skips_events_the_host_already_had() -> None:
    # Acks from the host get lost right before the drop: the host has events the device still
    # holds as unacknowledged. The hello's rx_next must stop them being delivered twice.
    async with sim_links() as (host, device, connector, _):
        assert connector.current is not None
        connector.current.drop = 1.0  # host's writes (acks, heartbeats) vanish from now on
        sent = events(4)
        posted = [device.post(e) for e in sent]
        assert await collect(host, 4) == sent
        async with asyncio.timeout(5):
            await asyncio.gather(*posted)  # acknowledged by the resume hello
            await exchange(host, device, 3)
        assert host.stats.links_lost == 1


async def _handled_by_a_host_that_dies(name: str, device: Link, handle: int) -> LinkPosition:
    """A host that handles ``handle`` events and dies before any ack reaches the table
    (its writes are lost); returns the position it had handled to (what the daemon
    journals)."""
    connector = FaultyConnector(connector_for(f"sim://{name}"))
    host = Link(connector, role=Role.HOST)
    async with host:
        async with asyncio.timeout(5):
            await host.wait_up()
        assert connector.current is not None
        connector.current.drop = 1.0  # from now on nothing the host writes arrives
        got = await collect(host, handle)
        assert got == events(handle)
        return host.position


@pytest.mark.parametrize("handled", [0, 1, 3, 5])
async def test_a_restarted_host_resumes_from_its_handled_position(handled: int) -> None:
    # The daemon dies after handling (journalling) some events but before the table saw an
    # ack. The next daemon resumes from the journalled position: the table drops exactly
    # what was handled and resends the rest: no duplicate, no loss.
    name = f"t{next(_names)}"
    sent = events(5)
    with SimListener(name) as listener:
        device = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0xB007))
        async with device:
            posted = [device.post(e) for e in sent]
            position = await _handled_by_a_host_that_dies(name, device, max(handled, 1))
            if handled == 0:
                position = LinkPosition(0xB007, 0)
            assert position == LinkPosition(0xB007, max(handled, 1) if handled else 0)
            assert not any(f.done() for f in posted)  # no ack ever reached the table
            host = Link(f"sim://{name}", role=Role.HOST, resume=position)
            seen: list[LinkEvent] = []
            async with host:
                async with asyncio.timeout(5):
                    if handled < len(sent):
                        assert await collect(host, len(sent) - handled, seen) == sent[handled:]
                    await asyncio.gather(*posted)
                    await exchange(host, device, 3)  # and nothing else was in between
            assert not any(isinstance(e, TableRebooted) for e in seen)


async def test_a_resuming_hello_does_not_time_the_downtime_as_a_round_trip(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The daemon dies (its connection closes), a new one resumes after a pause and its
    # hello acks the events the old one handled. Those frames were sent before the pause:
    # timed from their sending, the pause would count as one round trip and hold the
    # table's retransmission timeout near its maximum for the next few dozen frames.
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT", 0.2)
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT_MAX", 5.0)
    name = f"t{next(_names)}"
    sent = events(5)
    with SimListener(name) as listener:
        device = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0xB007))
        async with device:
            posted = [device.post(e) for e in sent]
            position = await _handled_by_a_host_that_dies(name, device, 3)
            await asyncio.sleep(0.6)  # the daemon restarts
            host = Link(f"sim://{name}", role=Role.HOST, resume=position)
            async with host:
                async with asyncio.timeout(5):
                    assert await collect(host, 2) == sent[3:]
                    await asyncio.gather(*posted)
                assert device.retransmit_timeout < 0.5


async def test_events_not_handled_before_a_reconnect_are_not_acked_by_its_hello() -> None:
    # Events arrive, the line drops before the daemon handled them, the link comes back:
    # the new hello must not ack them (the daemon may still die before handling them).
    # The host drops its stale copies; the table resends them; each is handled once.
    async with sim_links() as (host, device, connector, _):
        first = await next_status(host, LinkUp)
        sent = events(4)
        posted = [device.post(e) for e in sent]
        async with asyncio.timeout(5):
            # Nobody pulls events() here: they arrive and wait in the host's queue.
            while host.stats.frames_in < 4 or host._events.qsize() < len(sent):  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            assert connector.current is not None
            connector.current.pause(drop=True)
            while host._session == first.session or not host.is_up:  # noqa: ASYNC110
                await asyncio.sleep(0.01)
            assert not any(f.done() for f in posted)  # the new hello acked none of them
            seen: list[LinkEvent] = []
            assert await collect(host, len(sent), seen) == sent  # once each
            await asyncio.gather(*posted)
            await exchange(host, device, 2)
        assert [type(e) for e in seen] == [LinkLost, LinkUp]


async def test_a_stale_resume_position_acks_nothing() -> None:
    # A position of another boot (the table rebooted meanwhile) must not ack anything.
    name = f"t{next(_names)}"
    sent = events(3)
    with SimListener(name) as listener:
        device = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0x2222))
        async with device:
            posted = [device.post(e) for e in sent]
            host = Link(f"sim://{name}", role=Role.HOST, resume=LinkPosition(0x1111, 2))
            seen: list[LinkEvent] = []
            async with host:
                async with asyncio.timeout(5):
                    assert await collect(host, 3, seen) == sent
                    await asyncio.gather(*posted)
            assert TableRebooted(0x1111, 0x2222) in seen


@pytest.mark.parametrize("handled", [0, 2, 4])
async def test_events_kept_across_a_warm_reset_are_delivered_once(handled: int) -> None:
    # The firmware resets with events unacked: the new boot's link gets them as Retained
    # and sends those the host had not handled, before anything new.
    name = f"t{next(_names)}"
    sent = events(4)
    with SimListener(name) as listener:
        first = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0x1111))
        async with first:
            for e in sent:
                first.post(e)
            if handled:
                position = await _handled_by_a_host_that_dies(name, first, handled)
            else:
                position = LinkPosition(0, 0)
            retained = first.unacked()
        # In flight with their sequence numbers once a host was there; queued (-1) if not.
        seqs = range(4) if handled else [-1] * 4
        assert retained == Retained(0x1111, tuple(zip(seqs, sent, strict=True)))
        second = Link(
            listener.accept,
            role=Role.DEVICE,
            device_info=test_device_info(0x2222),
            retained=retained,
        )
        async with second:
            new = second.post(KeyPress(0, Key.MENU))  # caused after the reset
            host = Link(f"sim://{name}", role=Role.HOST, resume=position if handled else None)
            seen: list[LinkEvent] = []
            async with host:
                async with asyncio.timeout(5):
                    want = [*sent[handled:], KeyPress(0, Key.MENU)]
                    assert await collect(host, len(want), seen) == want
                    await new
                    await exchange(host, second, 2)
            assert (TableRebooted(0x1111, 0x2222) in seen) == bool(handled)


async def test_resume_and_retained_belong_to_their_roles() -> None:
    with pytest.raises(ValueError, match="host-role"):
        Link("sim://x", role=Role.DEVICE, device_info=test_device_info(), resume=LinkPosition(1, 0))
    with pytest.raises(ValueError, match="device-role"):
        Link("sim://x", role=Role.HOST, retained=Retained(1, ()))


@pytest.mark.parametrize("delay", [0.0, 0.03])
async def test_the_retransmit_timeout_follows_the_round_trip(
    monkeypatch: pytest.MonkeyPatch, delay: float
) -> None:
    # Start high; after an exchange the timeout comes from the measured round trip: above
    # the line's delay (no spurious resends), far below the unmeasured default.
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT", 1.0)
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT_MAX", 2.0)
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT_MIN", 0.001)
    monkeypatch.setattr(link_mod, "LINK_TIMEOUT", 5.0)
    faults = {"delay": delay}
    async with link_pair(host_faults=faults, device_faults=faults) as (host, device):
        assert host.retransmit_timeout == device.retransmit_timeout == 1.0
        await exchange(host, device, 20)
        for link in (host, device):
            assert 2 * delay < link.retransmit_timeout < 1.0


@pytest.mark.usefixtures("patient_link")
async def test_the_measured_timeout_has_a_floor(monkeypatch: pytest.MonkeyPatch) -> None:
    # The ceiling at the floor too: a round trip the loaded machine's scheduler stretched
    # past 50 ms would raise the measured timeout above the floor (that the timeout
    # follows the round trip has its own test); without the floor it stays at the tiny
    # round trip of an in-process pair.
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT_MIN", 0.05)
    monkeypatch.setattr(link_mod, "RETRANSMIT_TIMEOUT_MAX", 0.05)
    async with link_pair() as (host, device):
        await exchange(host, device, 10)
        assert host.retransmit_timeout == device.retransmit_timeout == 0.05


async def test_table_reboot_is_reported() -> None:
    name = f"t{next(_names)}"
    with SimListener(name) as listener:
        host = Link(f"sim://{name}", role=Role.HOST)
        seen: list[LinkEvent] = []
        async with host:
            first = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0x1111))
            async with first:
                async with asyncio.timeout(5):
                    await host.wait_up()
            second = Link(listener.accept, role=Role.DEVICE, device_info=test_device_info(0x2222))
            async with second:
                async with asyncio.timeout(5):
                    # The host acks once the event is handled: consume alongside.
                    got, _ = await asyncio.gather(
                        collect(host, 1, seen), second.send(KeyPress(0, Key.MENU))
                    )
                    assert got == [KeyPress(0, Key.MENU)]
        reboot = [e for e in seen if isinstance(e, TableRebooted)]
        assert reboot == [TableRebooted(0x1111, 0x2222)]
        ups = [e for e in seen if isinstance(e, LinkUp)]
        assert [u.rebooted for u in ups] == [False, True]
        assert host.boot_id == 0x2222


@pytest.mark.usefixtures("patient_link")
async def test_send_gives_up_after_max_retransmits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "LINK_TIMEOUT", 60.0)  # isolate the retransmit limit
    async with link_pair(device_faults={"seed": 1}) as (host, device):
        dev_t = device._transport
        assert dev_t is not None
        dev_t.drop = 1.0  # type: ignore[attr-defined]  # the device hears but never acks
        loop = asyncio.get_running_loop()
        start = loop.time()
        with pytest.raises(SendFailed, match="after 8 retransmissions"):
            async with asyncio.timeout(10):
                await host.send(DiceRoll())
        elapsed = loop.time() - start
        limit = link_mod.RETRANSMIT_TIMEOUT * 7 + link_mod.RETRANSMIT_TIMEOUT_MAX * 2
        assert elapsed >= limit * 0.9
        assert host.stats.send_failures == 1
        assert host.stats.retransmits == link_mod.MAX_RETRANSMITS


async def test_silence_takes_the_link_down_on_both_sides() -> None:
    async with link_pair(host_faults={"seed": 3}, device_faults={"seed": 4}) as (host, device):
        host._transport.pause()  # type: ignore[union-attr]
        device._transport.pause()  # type: ignore[union-attr]
        # No bound on how long it took: a loaded machine's stall only makes it later, and
        # next_status gives up after 5 s; the reason says which timeout was judged.
        for link in (host, device):
            lost = await next_status(link, LinkLost)
            assert lost.reason == f"no frame from the peer for {link_mod.LINK_TIMEOUT:g} s"
        assert not host.is_up
        with pytest.raises(LinkDown, match="down"):
            await host.send(DiceRoll())


@pytest.mark.usefixtures("patient_link")
async def test_pauses_during_traffic_lose_nothing() -> None:
    """Short stalls (held traffic) and short dropouts (lost traffic), both shorter than
    LINK_TIMEOUT, in the middle of a lossy exchange."""
    async with link_pair(
        host_faults={"seed": 7, "drop": 0.1}, device_faults={"seed": 8, "drop": 0.1}
    ) as (host, device):
        host_t, dev_t = host._transport, device._transport

        async def stutter() -> None:
            for i in range(6):
                await asyncio.sleep(0.03)
                target = host_t if i % 2 else dev_t
                target.pause(drop=i % 3 == 0)  # type: ignore[union-attr]
                await asyncio.sleep(0.075)
                target.resume()  # type: ignore[union-attr]

        await asyncio.gather(exchange(host, device, 60), stutter())
        assert host.stats.links_lost == 0 and device.stats.links_lost == 0


async def test_idle_link_stays_up_on_heartbeats() -> None:
    async with link_pair() as (host, device):
        await asyncio.sleep(link_mod.LINK_TIMEOUT * 3)
        assert host.is_up and device.is_up
        assert host.stats.links_lost == 0
        assert device.stats.frames_in >= 3  # heartbeats


async def test_wrong_direction_and_closed_link() -> None:
    async with link_pair() as (host, device):
        with pytest.raises(TypeError, match="command"):
            await host.send(KeyPress(0, Key.OK))  # an event, host sends commands
        with pytest.raises(TypeError, match="event"):
            await device.send(DiceRoll())
    with pytest.raises(LinkDown, match="closed"):
        await host.send(DiceRoll())
    assert await collect(host, 1) == []  # events() ends after close


async def test_send_while_never_connected_raises_link_down() -> None:
    async def refuse() -> Transport:
        raise TransportError("/dev/ttyACM0: No such file or directory")

    async with Link(refuse) as host:
        await asyncio.sleep(0.03)
        with pytest.raises(LinkDown, match="No such file"):
            await host.send(DiceRoll())


async def test_device_queue_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "DEVICE_QUEUE_MAX", 3)
    name = f"t{next(_names)}"
    with SimListener(name) as listener:
        async with Link(listener.accept, role=Role.DEVICE, device_info=test_device_info()) as dev:
            futures = [dev.post(KeyPress(0, Key.OK)) for _ in range(3)]
            with pytest.raises(SendFailed, match="waiting for the host"):
                dev.post(KeyPress(0, Key.OK))
    for f in futures:
        assert isinstance(f.exception(), LinkDown)


async def test_scripted_firmware_peer() -> None:
    """A hand-written device speaking raw frames, as a firmware author would: checks the
    handshake fields, acks, and the handling of an unknown message type."""
    host_end, fw = transport_pair()
    host = Link(_once(host_end), role=Role.HOST)
    dec = FrameDecoder()
    backlog: list[Frame] = []  # frames read together with an earlier match

    async def next_frame(msg_type: int) -> Frame:
        while True:
            while backlog:
                f = backlog.pop(0)
                if f.msg_type == msg_type:
                    return f
            backlog.extend(dec.feed(await fw.read()))

    async with host:
        async with asyncio.timeout(5):
            f = await next_frame(Hello.MSG_TYPE)
            assert f.flags == Flags.SYN
            hello = Hello.from_bytes(f.payload)
            assert (hello.protocol_major, hello.schema_hash) == (1, SCHEMA_HASH)
            assert hello.resume_boot_id == 0
            reply = HelloReply(1, 0, HelloStatus.OK, SCHEMA_HASH, hello.session, 0xC0FFEE, 200,
                               "fw-script", 4, test_device_info().capabilities)  # fmt: skip
            fw.write(encode_frame(Frame(Flags.SYN, 0, 0, HelloReply.MSG_TYPE, reply.to_bytes())))
            await host.wait_up()
            # An event type from a newer firmware, then a known one: both must be acked.
            fw.write(encode_frame(Frame(Flags.RELIABLE, 200, 0, 0xF0, b"future")))
            key = KeyPress(2, Key.RIICHI)
            fw.write(encode_frame(Frame(Flags.RELIABLE, 201, 0, 0x83, key.to_bytes())))
            assert await collect(host, 1) == [key]
            ack = await next_frame(Ack.MSG_TYPE)
            while ack.ack != 202:
                ack = await next_frame(Ack.MSG_TYPE)
            assert ack.flags & Flags.ACK
            assert host.stats.unknown_messages == 1
            # A command from the host carries seq 0 of the session; ack it via a heartbeat.
            sending = asyncio.ensure_future(host.send(DiceRoll()))
            cmd = await next_frame(DiceRoll.MSG_TYPE)
            assert cmd.seq == 0 and cmd.flags == Flags.RELIABLE | Flags.ACK
            hb = Heartbeat(hello.session, 1234).to_bytes()
            fw.write(encode_frame(Frame(Flags.ACK, 0, 1, Heartbeat.MSG_TYPE, hb)))
            await sending
            # A heartbeat without our session means the table lost it: the host drops.
            fw.write(encode_frame(Frame(Flags.NONE, 0, 0, Heartbeat.MSG_TYPE, bytes(6))))
            seen: list[LinkEvent] = []
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await collect(host, 1, seen)
            assert any(isinstance(e, LinkLost) and "dropped session" in e.reason for e in seen)
    await fw.close()


async def test_batches_group_what_arrived_and_ack_only_what_the_consumer_acknowledges() -> None:
    async with link_pair() as (host, device):
        sent = [KeyPress(seat=s % 4, key=Key.DIGIT_0) for s in range(12)]
        for msg in sent:
            device.post(msg)
        await asyncio.sleep(0.05)  # all of them arrive before the host looks
        groups = host.batches(limit=5)
        first = await anext(groups)
        assert [type(d.item).__name__ for d in first] == ["LinkUp", *["KeyPress"] * 4]
        await asyncio.sleep(0.05)
        unacked = len(device.unacked().events)
        assert unacked >= 5  # nothing acknowledged by taking a group
        host.acknowledge(first[-1])
        await asyncio.sleep(0.05)
        assert len(device.unacked().events) == unacked - 4  # exactly what was acknowledged
        got: list[Any] = [d.item for d in first[1:]]
        sizes = [len(first)]
        while len(got) < len(sent):
            group = await anext(groups)
            sizes.append(len(group))
            got += [d.item for d in group]
            assert group[-1].position == host.position
            host.acknowledge(group[-1])
        assert got == sent and max(sizes) <= 5
        await asyncio.sleep(0.05)
        assert device.unacked().events == ()
        await groups.aclose()


def _sent_frames(link: Link) -> list[Frame]:
    """Every frame ``link`` put on its (capturing) line so far."""
    line = link._transport
    assert isinstance(line, FaultyTransport)
    decoder = FrameDecoder()
    return [f for chunk in line.captured for f in decoder.feed(chunk)]


async def test_a_host_acks_an_event_once_it_is_handled_on_the_command_it_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # No retransmission while the event waits: a resent copy is acked at once (below).
    for name in ("RETRANSMIT_TIMEOUT", "RETRANSMIT_TIMEOUT_MIN", "RETRANSMIT_TIMEOUT_MAX"):
        monkeypatch.setattr(link_mod, name, 5.0)
    async with link_pair(host_faults={"capture": True}) as (host, device):
        groups = host.batches()
        await anext(groups)  # LinkUp
        before = len(_sent_frames(host))
        device.post(KeyPress(seat=1, key=Key.DIGIT_0))
        [delivery] = await anext(groups)
        await asyncio.sleep(0.05)
        # Received, not handled: an Ack now could only repeat the old position.
        unhandled = [f for f in _sent_frames(host)[before:] if f.msg_type == Ack.MSG_TYPE]
        assert unhandled == []
        assert len(device.unacked().events) == 1
        # Handled: acknowledged and answered in the same turn, the command carries the ack.
        assert delivery.position is not None
        host.acknowledge(delivery)
        host.post_nowait(SeatDisplay(seat=1, line1="S DIFF", line2=""))
        await asyncio.sleep(0.05)
        after = _sent_frames(host)[before:]
        assert [f.msg_type for f in after if f.msg_type != Heartbeat.MSG_TYPE] == [
            SeatDisplay.MSG_TYPE
        ]
        assert after[-1].ack == delivery.position.rx_next and after[-1].flags & Flags.ACK
        assert device.unacked().events == ()
        # Handled with nothing to send: one bare Ack.
        device.post(KeyPress(seat=2, key=Key.DIGIT_0))
        [second] = await anext(groups)
        host.acknowledge(second)
        await asyncio.sleep(0.05)
        acks = [f for f in _sent_frames(host)[before:] if f.msg_type == Ack.MSG_TYPE]
        assert second.position is not None
        assert [f.ack for f in acks] == [second.position.rx_next]
        assert device.unacked().events == ()
        await groups.aclose()


async def test_a_duplicate_event_is_acked_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """An event the host handled already (its ack was lost): the table must hear the
    position again without waiting for anything to be handled."""
    for name in ("RETRANSMIT_TIMEOUT", "RETRANSMIT_TIMEOUT_MIN", "RETRANSMIT_TIMEOUT_MAX"):
        monkeypatch.setattr(link_mod, name, 5.0)
    async with link_pair(host_faults={"capture": True}) as (host, device):
        groups = host.batches()
        await anext(groups)  # LinkUp
        device.post(KeyPress(seat=1, key=Key.DIGIT_0))
        [delivery] = await anext(groups)
        host.acknowledge(delivery)
        await asyncio.sleep(0.05)
        before = len(_sent_frames(host))
        assert delivery.position is not None
        resent = Frame(Flags.RELIABLE, delivery.position.rx_next - 1, 0, KeyPress.MSG_TYPE,
                       KeyPress(seat=1, key=Key.DIGIT_0).to_bytes())  # fmt: skip
        line = device._transport
        assert line is not None
        line.write(encode_frame(resent))
        await asyncio.sleep(0.05)
        acks = [f for f in _sent_frames(host)[before:] if f.msg_type == Ack.MSG_TYPE]
        assert [f.ack for f in acks] == [delivery.position.rx_next]
        assert host.stats.duplicates_dropped == 1
        await groups.aclose()


async def test_each_event_says_how_many_commands_the_table_had_when_it_sent_it() -> None:
    """``Delivery.peer_acked``: the daemon tells which of its displays a key was pressed
    on (tablectl/console/screens.py)."""
    async with link_pair() as (host, device):
        groups = host.batches()
        assert isinstance((await anext(groups))[0].item, LinkUp)
        device.post(KeyPress(seat=0, key=Key.OK))  # before any command reached it
        await asyncio.gather(*(host.post(msg) for msg in commands(3)))
        assert host.posted_count == 3
        device.post(KeyPress(seat=1, key=Key.OK))  # after all three
        keys: list[Any] = []
        while len(keys) < 2:
            group = await anext(groups)
            keys += [d for d in group if isinstance(d.item, KeyPress)]
            host.acknowledge(group[-1])
        assert [d.peer_acked for d in keys] == [0, 3]
        assert [d.session for d in keys] == [host.session] * 2
        await groups.aclose()
