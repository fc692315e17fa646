"""A round-robin TCP proxy for the benches, standing in for nginx (not installed on this machine):
each new connection goes to the next upstream in turn (skipping one that refuses), then bytes are
copied both ways until either side closes. No HTTP parsing, so WebSockets pass as they are.

    python bench/_proxy.py PORT HOST:PORT [HOST:PORT ...]

Prints "listening" once it accepts. It runs as a process of its own, so its copying competes with
the web processes for the cores as nginx would, not with the bench's client.
"""

import asyncio
import contextlib
import itertools
import sys


async def pump(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError):
        while data := await source.read(65536):
            sink.write(data)
            await sink.drain()
        sink.write_eof()


async def main(port: int, upstreams: list[tuple[str, int]]) -> None:
    turn = itertools.cycle(range(len(upstreams)))

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        for _ in upstreams:
            with contextlib.suppress(OSError):
                up_reader, up_writer = await asyncio.open_connection(*upstreams[next(turn)])
                break
        else:
            writer.close()
            return
        await asyncio.gather(pump(reader, up_writer), pump(up_reader, writer))
        up_writer.close()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", port, backlog=1024)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    hosts = [(h, int(p)) for h, p in (arg.rsplit(":", 1) for arg in sys.argv[2:])]
    asyncio.run(main(int(sys.argv[1]), hosts))
