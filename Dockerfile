FROM python:3.11-slim-bookworm
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY scripts/system-packages.sh scripts/
RUN bash scripts/system-packages.sh && rm -rf /var/lib/apt/lists/*
COPY pyproject.toml ./
RUN pip install --no-cache-dir .
COPY . .
EXPOSE 8000
# As docker-compose.yml's web service: WebSocket messages bounded (annotation/agents/server.py).
CMD ["daphne", "-b", "0.0.0.0", "-p", "8000", "--websocket-max-message-size", "524288", \
     "--websocket-max-frame-size", "524288", "arena_site.asgi:application"]
