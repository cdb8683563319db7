from django.conf import settings
from django.contrib import admin
from django.urls import include, path

from lightmysky import health, views
from lightmysky.api import api_urls, openapi_json
from lightmysky.sitemaps import sitemap_section, sitemap_xml

handler400 = "lightmysky.views.bad_request"
handler403 = "lightmysky.views.permission_denied"
handler404 = "lightmysky.views.not_found"
handler500 = "lightmysky.views.server_error"

urlpatterns = [
    # Answered by health_middleware before any other; named here for reverse().
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("robots.txt", views.robots_txt, name="robots_txt"),
    path("llms.txt", views.llms_txt, name="llms_txt"),
    path("llms-full.txt", views.llms_full_txt, name="llms_full_txt"),
    path(".well-known/ai-catalog.json", views.ai_catalog, name="ai_catalog"),
    path("agent-instructions.md", views.agent_instructions, name="agent_instructions"),
    path("auth.md", views.auth_md, name="auth_md"),
    path("pricing.md", views.pricing_md, name="pricing_md"),
    path("openapi.json", openapi_json, name="openapi"),
    path("api/v1/", api_urls()),
    path("sitemap.xml", sitemap_xml, name="sitemap"),
    path("sitemap-<slug:section>.xml", sitemap_section, name="sitemap_section"),
    path("favicon.ico", views.favicon, name="favicon"),
    path("admin/", admin.site.urls),
    path("", include("lessons.urls")),
    path("", include("practice.urls")),
]

if settings.DEBUG:
    from django.conf.urls.static import static

    urlpatterns += static(settings.MEDIA_URL, document_root=settings.MEDIA_ROOT)
