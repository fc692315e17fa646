"""Django's PostgreSQL backend, with a connection pool that comes back at once after a database
restart or failover (base.py)."""
