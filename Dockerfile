# One image for every Python service of docker-compose.yml: engine, ladder-grpc, web,
# migrate, worker, beat. The service's `command` picks the role.
#
# Two stages: `build` has a C compiler and the Python headers, installs the
# dependencies into a virtualenv and compiles the rules core with mypyc (2.4-3x
# faster than the pure build, docs/operations.md); the runtime stage copies the
# virtualenv and the application and has no compiler. Both stages must be the same
# Python build (the compiled modules are for it): the official python images of
# one version and Debian release are. Without a registry: deploy/standin-images.sh.

# --- build ---------------------------------------------------------------------------------
FROM python:3.11-bookworm AS build

ENV PYTHONDONTWRITEBYTECODE=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH

RUN python -m venv /opt/venv
WORKDIR /app

# Dependencies first, so editing code does not reinstall them: the bot SDK (its own
# distribution, sdk/), then the ladder's dependencies read from pyproject.toml (with the
# s3 extra, django-storages, so LADDER_STORAGE=s3 works; with the monitoring extra,
# Flower), then mypyc (the native extra) for this stage only.
COPY sdk ./sdk
RUN pip install ./sdk
COPY pyproject.toml ./
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb'))['project']; \
o = p['optional-dependencies']; \
print('\n'.join(d for d in p['dependencies'] + o['s3'] + o['monitoring'] \
if not d.startswith('digdown-sdk')))" > /tmp/requirements.txt \
    && python -c "import tomllib; \
print('\n'.join(tomllib.load(open('pyproject.toml', 'rb'))['project']['optional-dependencies']['native']))" \
    > /tmp/native.txt \
    && pip install -r /tmp/requirements.txt \
    && pip install --target /opt/native -r /tmp/native.txt

# The rules core compiled (before the rest is copied: a change elsewhere keeps this layer);
# the build fails here rather than ship the pure build.
COPY engine ./engine
RUN PYTHONPATH=/opt/native python -m engine.compile_rules \
    && python -c "import sys, engine.rules as r; \
sys.exit(0 if r.BUILD == 'compiled' else 'rules core not compiled: ' + r.BUILD_REASON)"

COPY ladder ./ladder
COPY workers ./workers
COPY examples ./examples
COPY protos ./protos
COPY deploy ./deploy
COPY telemetry ./telemetry
COPY manage.py ./

# The site's static files, collected once under hashed names for WhiteNoise (with
# DJANGO_DEBUG=0, the storage production uses; the key is only for this step).
RUN DJANGO_DEBUG=0 DJANGO_SECRET_KEY=collectstatic-only LADDER_VAR_DIR=/tmp/var \
    LADDER_STATIC_ROOT=/app/static python manage.py collectstatic --noinput -v0

# --- runtime -------------------------------------------------------------------------------
FROM python:3.11-slim-bookworm

# bubblewrap: the workers' sandbox for hosted bots (docs/sandbox.md); libseccomp2 compiles
# its system-call filter; curl: the healthchecks (deploy/probe.sh), which start no Python.
RUN apt-get update \
    && apt-get install -y --no-install-recommends bubblewrap libseccomp2 curl \
    && rm -rf /var/lib/apt/lists/*

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PATH=/opt/venv/bin:$PATH

COPY --from=build /opt/venv /opt/venv
COPY --from=build /app /app
WORKDIR /app

# Never run as root: the services need no privileges, only their data directories.
RUN useradd --create-home --uid 10001 ladder \
    && mkdir -p /data/media /data/var \
    && chown -R ladder:ladder /data
USER ladder

ENV DJANGO_SETTINGS_MODULE=ladder.settings \
    LADDER_STATIC_ROOT=/app/static \
    LADDER_VAR_DIR=/data/var \
    LADDER_MEDIA_ROOT=/data/media

EXPOSE 50051 50052 8000
CMD ["python", "-m", "engine.server", "--listen", "0.0.0.0:50051"]
