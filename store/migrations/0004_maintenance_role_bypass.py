from django.db import migrations

# Turning the bypass on now also needs membership of the maintenance role (memento/roles.py): web processes log in
# as the app role, which may set `memento.rls_bypass` like any setting but is no member, so a SQL injection there
# still sees one user's rows. The policy SQL is written out here, not imported, so that no later code change
# alters what this migration did.
ROLE = "memento_maintenance"


def rls_policy_sql(table: str, bypass: str) -> str:
    """SQL that replaces `table`'s owner-only policy; `bypass` is the condition that shows every row."""
    return f"""
        DROP POLICY IF EXISTS owner_only ON {table};
        CREATE POLICY owner_only ON {table}
            USING (({bypass})
                   OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint)
            WITH CHECK (({bypass})
                        OR owner_id = nullif(current_setting('memento.user_id', true), '')::bigint);
    """


MAINTENANCE_BYPASS = (f"current_setting('memento.rls_bypass', true) = 'on' "
                      f"AND pg_has_role(current_user, '{ROLE}', 'MEMBER')")
SETTING_BYPASS = "current_setting('memento.rls_bypass', true) = 'on'"


def require_maintenance_role(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", [ROLE])
        if cursor.fetchone() is None:
            raise RuntimeError(
                f"The database role {ROLE} does not exist: a superuser creates it once, and the app's own role "
                f"hands over its tables (README, \"Production\"). The embedded server does this itself."
            )


TABLES = ["store_itemvector"]


class Migration(migrations.Migration):
    dependencies = [("store", "0003_itemvector_field")]

    operations = [
        migrations.RunPython(require_maintenance_role, migrations.RunPython.noop),
        *(migrations.RunSQL(rls_policy_sql(table, MAINTENANCE_BYPASS), reverse_sql=rls_policy_sql(table, SETTING_BYPASS))
          for table in TABLES),
    ]
