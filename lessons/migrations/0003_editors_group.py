"""The "Editors" group, with exactly the permissions content editors need."""

from django.db import migrations

EDITOR_PERMISSIONS = {
    "lessons": {
        "subject": ["view", "add", "change"],
        "area": ["view", "add", "change"],
        "lesson": ["view", "add", "change", "delete"],
        "question": ["view", "add", "change", "delete"],
        "flashcard": ["view", "add", "change", "delete"],
        "problemreport": ["view", "change"],
    },
}


def create_editors_group(apps, schema_editor):
    from django.contrib.auth.management import create_permissions

    # Permissions are normally made after all migrations; make them now so the group can have them.
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, apps=apps, verbosity=0)
        app_config.models_module = None

    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    group, _ = Group.objects.get_or_create(name="Editors")
    wanted = [
        f"{action}_{model}"
        for models in EDITOR_PERMISSIONS.values()
        for model, actions in models.items()
        for action in actions
    ]
    permissions = Permission.objects.filter(
        content_type__app_label__in=EDITOR_PERMISSIONS, codename__in=wanted
    )
    group.permissions.set(permissions)


def remove_editors_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name="Editors").delete()


class Migration(migrations.Migration):
    dependencies = [
        ("lessons", "0002_problem_report"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(create_editors_group, remove_editors_group)]
