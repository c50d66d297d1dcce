# The API image (also runs the Chroma server in compose.yaml: `chroma` ships with chromadb).
# Build: docker build -t incident-rca .   Run: see docs/architecture/deployment.md.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies and code first, knowledge sources after: editing a doc does not reinstall.
COPY pyproject.toml README.md ./
COPY backend ./backend
RUN pip install . && rm -rf backend

COPY data/knowledge ./data/knowledge

# A non-root user owning only its state folder (the Chroma server's data lives below it).
RUN useradd --create-home --uid 10001 --user-group rca \
    && mkdir -p /app/var/chroma \
    && chown -R rca:rca /app/var
USER rca

# Installed (not editable), the package cannot find ./data from its own location: say where.
# Bound to 0.0.0.0, the service refuses to start without RCA_API_KEYS (auth stays on).
ENV RCA_KNOWLEDGE_DIR=/app/data/knowledge \
    RCA_STATE_DIR=/app/var \
    RCA_PORT=8000

EXPOSE 8000
HEALTHCHECK --interval=10s --timeout=5s --start-period=90s --retries=3 \
    CMD ["python", "-c", "import urllib.request; urllib.request.urlopen('http://127.0.0.1:8000/health', timeout=3)"]

CMD ["rca", "serve", "--host", "0.0.0.0"]
