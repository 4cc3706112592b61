from django.conf import settings
from django.db import migrations

# DRF's authtoken kept each user's key in clear (authtoken_token). Each key becomes a hashed "sign-in" token that
# keeps working (same key, same user, expiring API_TOKEN_TTL_DAYS after it was made, as before), and the clear
# table is emptied. The app is no longer installed; its table is left empty where an older install made it.
# Written out here, not imported, so that no later code change alters this migration.
COPY = """
    INSERT INTO accounts_apitoken (user_id, name, prefix, digest, access, agent_id, for_end_users, created_at,
                                   expires_at)
    SELECT user_id, 'sign-in', left(key, 12), encode(sha256(convert_to(key, 'UTF8')), 'hex'), 'read_write', '',
           false, created, CASE WHEN %s = 0 THEN NULL ELSE created + %s * interval '1 day' END
    FROM authtoken_token
    ON CONFLICT (digest) DO NOTHING
"""


def hash_keys(apps, schema_editor):
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT to_regclass('authtoken_token') IS NOT NULL")
        if not cursor.fetchone()[0]:
            return
        days = settings.API_TOKEN_TTL_DAYS
        cursor.execute(COPY, [days, days])
        cursor.execute("DELETE FROM authtoken_token")


class Migration(migrations.Migration):
    dependencies = [("accounts", "0002_row_level_security")]

    operations = [migrations.RunPython(hash_keys, migrations.RunPython.noop)]
