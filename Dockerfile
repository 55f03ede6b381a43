# One image for every Python service of docker-compose.yml: engine, ladder-grpc, web,
# migrate, worker, beat. The service's `command` picks the role.
FROM python:3.11-slim

# bubblewrap: the workers' sandbox for hosted bots (docs/sandbox.md); libseccomp2 compiles
# its system-call filter.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app

# Dependencies first, so editing code does not reinstall them: the bot SDK
# (its own distribution, sdk/), then the ladder's dependencies read from
# pyproject.toml (with the s3 extra, django-storages, so LADDER_STORAGE=s3
# works; with the monitoring extra, Flower), and only then the code itself without
# touching dependencies again.
COPY sdk ./sdk
RUN pip install ./sdk
COPY pyproject.toml README.md ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
print('\n'.join(d for d in p['dependencies'] + p['optional-dependencies']['s3'] \
+ p['optional-dependencies']['monitoring'] \
if not d.startswith('digdown-sdk')))" > /tmp/requirements.txt \
    && pip install -r /tmp/requirements.txt
COPY engine ./engine
COPY ladder ./ladder
COPY workers ./workers
COPY examples ./examples
COPY protos ./protos
COPY deploy ./deploy
COPY telemetry ./telemetry
COPY manage.py ./
RUN pip install --no-deps ".[s3]"

# The site's static files, collected once under hashed names for WhiteNoise (with
# DJANGO_DEBUG=0, the storage production uses; the key is only for this step).
ENV LADDER_STATIC_ROOT=/app/static
RUN DJANGO_DEBUG=0 DJANGO_SECRET_KEY=collectstatic-only LADDER_VAR_DIR=/tmp/var \
    python manage.py collectstatic --noinput -v0

# Never run as root: the services need no privileges, only their data directories.
RUN useradd --create-home --uid 10001 ladder \
    && mkdir -p /data/media /data/var \
    && chown -R ladder:ladder /data
USER ladder

ENV DJANGO_SETTINGS_MODULE=ladder.settings \
    LADDER_VAR_DIR=/data/var \
    LADDER_MEDIA_ROOT=/data/media

EXPOSE 50051 50052 8000
CMD ["python", "-m", "engine.server", "--listen", "0.0.0.0:50051"]
