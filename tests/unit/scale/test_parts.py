"""The worker pool's pure parts: frames between processes, merging each worker's health."""

from __future__ import annotations

import asyncio
import multiprocessing
import pickle

import pytest

from loadgen.execute.executor import StepOutcome
from loadgen.scale.frames import frame, open_stream, read_frame
from loadgen.scale.merge import merge_health
from loadgen.summary import ClientHealth


def test_frames_read_back_whole_and_in_order_across_a_socket() -> None:
    a, b = multiprocessing.Pipe(duplex=True)
    messages = [b"S", b"R" + b"x" * 300_000, b"", pickle.dumps(("go", 123))]

    async def go() -> list[bytes]:
        reader, writer = await open_stream(b)

        def send_all() -> None:  # the blocking end writes what the stream end reads
            for m in messages:
                a.send_bytes(m)

        sending = asyncio.create_task(asyncio.to_thread(send_all))
        got = [await read_frame(reader) for _ in messages]
        await sending
        writer.write(frame(b"back"))
        await writer.drain()
        writer.close()
        return got

    assert asyncio.run(go()) == messages
    assert a.recv_bytes() == b"back"  # and a frame is what Connection reads
    a.close()


def test_a_closed_end_reads_as_incomplete() -> None:
    a, b = multiprocessing.Pipe(duplex=True)

    async def go() -> None:
        reader, _ = await open_stream(b)
        a.close()
        with pytest.raises(asyncio.IncompleteReadError):
            await read_frame(reader)

    asyncio.run(go())


def test_merged_health_is_the_worst_worker_and_keeps_each() -> None:
    calm = ClientHealth(cpu_util=0.2, loop_lag_p99_ms=0.1, read_lag_p99_ms=1.0)
    busy = ClientHealth(
        cpu_util=0.95,
        loop_lag_p99_ms=3.0,
        read_lag_p99_ms=None,
        saturated=True,
        warnings=["event-loop lag p99 3.0 ms: timestamps may run late"],
    )
    merged = merge_health([(0, calm), (1, busy)], parent_cpu=0.05)
    assert merged.cpu_util == 0.95 and merged.loop_lag_p99_ms == 3.0
    assert merged.read_lag_p99_ms == 1.0 and merged.send_lag_p99_ms is None
    assert merged.saturated
    assert merged.warnings == ["worker 1: event-loop lag p99 3.0 ms: timestamps may run late"]
    assert merged.cpu_util_total == pytest.approx(1.2)
    assert merged.workers == [calm, busy]


def test_in_flight_of_several_processes_adds_their_means() -> None:
    outcome = StepOutcome(
        ClientHealth(), in_flight=[[(1, 2), (2, 4), (9, 100)], [(1, 3), (2, 3)], [(50, 7)]]
    )
    assert outcome.mean_in_flight(0, 5) == pytest.approx(3 + 3)
    assert outcome.mean_in_flight(60, 70) is None


def test_shift_record_moves_every_clock_reading_and_no_duration() -> None:
    from loadgen.records import Record
    from loadgen.scale.merge import shift_record

    rec = Record(
        step=0,
        id=1,
        warmup=False,
        request_id="r",
        prompt_tokens_requested=4,
        max_tokens=3,
        scheduled_ns=90,
        start_ns=100,
        sent_ns=101,
        headers_ns=110,
        first_token_ns=120,
        first_answer_ns=120,
        last_token_ns=140,
        end_ns=150,
        token_ns=[120, 130, 140],
        output_tokens_server=3,
    )
    shift_record(rec, -1_000)
    assert (rec.scheduled_ns, rec.start_ns, rec.end_ns) == (-910, -900, -850)
    assert rec.token_ns == [-880, -870, -860] and rec.first_reasoning_ns is None
    assert rec.first_token_ns - rec.sent_ns == 19  # a latency is a difference: unchanged
    assert rec.output_tokens_server == 3  # counts are no times


def test_commands_and_the_step_report_survive_their_trip_typed() -> None:
    from loadgen.scale.messages import Clock, Exit, Go, Step, StepDone, Stop

    for command in (Step(3, "rate", 2.5, 1, 4), Go(123), Clock(), Stop(), Exit()):
        back = pickle.loads(pickle.dumps(command))
        assert back == command and type(back) is type(command)
    health = ClientHealth(cpu_util=0.5, loop_lag_p99_ms=0.25, warnings=["w"])
    done = StepDone(health=health, in_flight=[(10, 2), (20, 3)], http_versions=["HTTP/2"])
    back_done = StepDone.model_validate_json(done.model_dump_json())
    assert back_done == done
    assert back_done.health == health and back_done.in_flight == [(10, 2), (20, 3)]
    assert StepDone.model_validate_json(b'{"sat_out": true}').health is None


def test_every_stamp_of_a_record_moves_onto_the_parents_clock() -> None:
    """A worker's record is shifted by its clock offset: every ``*_ns`` stamp, so a field
    added to Record later cannot be left on the worker's clock."""
    from dataclasses import fields

    from loadgen.records import Record
    from loadgen.scale.merge import _TIME_FIELDS

    durations = {"token_ns", "token_slack_ns", "end_slack_ns"}  # a list, and how early
    stamps = {f.name for f in fields(Record) if f.name.endswith("_ns") and f.name not in durations}
    assert stamps == set(_TIME_FIELDS)
