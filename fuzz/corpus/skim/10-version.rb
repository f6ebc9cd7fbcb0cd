
# frozen_string_literal: true

module Sinatra
  VERSION = '4.2.1'
end
