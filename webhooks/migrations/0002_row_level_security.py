from django.db import migrations

# Owner-only row-level security on endpoints and deliveries, with the one rule every app's policies call (memories
# migration 0015). Written out here, not imported, so that no later code change alters this migration.
TABLES = ["webhooks_endpoint", "webhooks_delivery"]


def policy_sql(table: str) -> str:
    return f"""
        ALTER TABLE {table} ENABLE ROW LEVEL SECURITY;
        ALTER TABLE {table} FORCE ROW LEVEL SECURITY;
        DROP POLICY IF EXISTS owner_only ON {table};
        CREATE POLICY owner_only ON {table}
            USING (memento_owner_visible(owner_id)) WITH CHECK (memento_owner_visible(owner_id));
    """


def drop_sql(table: str) -> str:
    return f"""
        DROP POLICY IF EXISTS owner_only ON {table};
        ALTER TABLE {table} NO FORCE ROW LEVEL SECURITY;
        ALTER TABLE {table} DISABLE ROW LEVEL SECURITY;
    """


class Migration(migrations.Migration):
    dependencies = [("webhooks", "0001_initial"), ("memories", "0015_owner_visible")]

    operations = [migrations.RunSQL(policy_sql(table), reverse_sql=drop_sql(table)) for table in TABLES]
