# slamon image for docker-compose: one image, every role chosen by its command.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1
WORKDIR /app
COPY pyproject.toml README.md alembic.ini ./
COPY monitor ./monitor
COPY workers ./workers
COPY dashboards ./dashboards
RUN pip install --no-cache-dir -e . && useradd --system --home /app slamon
USER slamon
EXPOSE 8080
CMD ["slamon", "run", "--host", "0.0.0.0"]
