"""A round-robin TCP proxy for the benches, standing in for nginx (not installed on this machine):
each new connection goes to the next upstream in turn (skipping one that refuses), then bytes are
copied both ways until either side closes. No HTTP parsing, so WebSockets pass as they are.

    python bench/_proxy.py PORT HOST:PORT [HOST:PORT ...]

Prints "listening" once it accepts. It runs as a process of its own, so its copying competes with
the web processes for the cores as nginx would, not with the bench's client. asyncio protocols
write each chunk straight to the other side's transport (no streams, no awaiting per chunk), and
a side whose peer cannot keep up stops reading until it can.
"""

import asyncio
import itertools
import sys


class Side(asyncio.Protocol):
    """One end of a proxied connection; `peer` is the other end, once it exists."""

    def __init__(self, peer: "Side | None" = None) -> None:
        self.peer = peer
        self.transport: asyncio.Transport | None = None
        self.early: list[bytes] = []  # what came before the peer was connected

    def connection_made(self, transport) -> None:
        self.transport = transport
        if self.peer is not None:  # the upstream end: the client's bytes so far go first
            self.peer.peer = self
            for chunk in self.peer.early:
                transport.write(chunk)
            self.peer.early.clear()
            self.peer.transport.resume_reading()

    def data_received(self, data: bytes) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.write(data)
        else:
            self.early.append(data)

    def eof_received(self):
        if self.peer is not None and self.peer.transport is not None and self.peer.transport.can_write_eof():
            self.peer.transport.write_eof()
        return True  # keep the other direction open until it closes too

    def connection_lost(self, exc) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.close()

    # Flow control: while the peer's outgoing buffer is full, stop reading from this side.
    def pause_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.pause_reading()

    def resume_writing(self) -> None:
        if self.peer is not None and self.peer.transport is not None:
            self.peer.transport.resume_reading()


async def main(port: int, upstreams: list[tuple[str, int]]) -> None:
    loop = asyncio.get_running_loop()
    turn = itertools.cycle(range(len(upstreams)))

    class Client(Side):
        def connection_made(self, transport) -> None:
            super().connection_made(transport)
            transport.pause_reading()  # until the upstream is connected
            self.connecting = loop.create_task(self.connect())  # kept referenced while it runs

        async def connect(self) -> None:
            for _ in upstreams:
                try:
                    await loop.create_connection(lambda: Side(peer=self), *upstreams[next(turn)])
                    return
                except OSError:
                    continue
            self.transport.close()  # every upstream refused

    server = await loop.create_server(Client, "127.0.0.1", port, backlog=1024)
    print("listening", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    hosts = [(h, int(p)) for h, p in (arg.rsplit(":", 1) for arg in sys.argv[2:])]
    asyncio.run(main(int(sys.argv[1]), hosts))
